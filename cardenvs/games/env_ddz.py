"""The Dou Dizhu family's AEC environment: the shared env plus this family's info fields."""

from __future__ import annotations

import numpy as np

from ..core.aec import CardEnv
from ..core.state import BID, LANDLORD, PHASE


class DouDizhuEnv(CardEnv):
    PHASES = ("auction", "play", "done")

    def _extra_info(self, info: dict) -> None:
        s = self.state_vec
        info["phase"] = self.PHASES[int(s[PHASE])]
        info["landlord"] = int(s[LANDLORD])
        info["bid"] = int(s[BID])

    def legal_play_features(self) -> tuple[np.ndarray, np.ndarray]:
        """Legal action ids and per-action features for (state, action) scoring agents.

        Returns ``(ids, features)`` where ``features[i]`` describes action ``ids[i]``: its cards
        as "at least k copies" planes (ranks x depth), a one-hot family, the chain length / 12,
        the key rank / 15, a bomb flag, then pass and bid flags (bid one-hot).
        """
        ids = self.legal_actions()
        return ids, self.game.action_features(ids)
