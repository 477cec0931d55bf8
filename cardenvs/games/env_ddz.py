"""The Dou Dizhu family's AEC environment: the shared env plus this family's info fields."""

from __future__ import annotations

from ..core.aec import CardEnv
from ..core.state import BID, LANDLORD


class DouDizhuEnv(CardEnv):
    PHASES = ("auction", "play", "done")

    def _extra_info(self, info: dict) -> None:
        s = self.state_vec
        info["phase"] = self.phase()
        info["landlord"] = int(s[LANDLORD])
        info["bid"] = int(s[BID])
