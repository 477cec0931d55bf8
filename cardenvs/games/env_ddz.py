"""The Dou Dizhu family's AEC environment: the shared env plus this family's info fields."""

from __future__ import annotations

from ..core.aec import CardEnv
from ..core.state import BID, LANDLORD, PHASE


class DouDizhuEnv(CardEnv):
    """The AEC environment of the Dou Dizhu family (:mod:`cardenvs.doudizhu_v0`,
    :mod:`cardenvs.doudizhu4_v0`): the shared env with the phase, landlord and bid in the
    infos."""

    PHASES = ("auction", "play", "done")

    def _extra_info(self, info: dict) -> None:
        s = self.state_vec
        info["phase"] = self._phase_codes[s.item(PHASE)]  # self.phase()
        info["landlord"] = s.item(LANDLORD)  # a Python int
        info["bid"] = s.item(BID)
