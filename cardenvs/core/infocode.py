"""Named integers for the info dicts: numeric to every library, readable to people.

The environments' infos hold numbers only (libraries that turn infos into tensors or stack
them across steps need it: TorchRL's ``PettingZooWrapper``, Tianshou, ``gymnasium.vector``).
A categorical entry such as ``info["phase"]`` is a :class:`Named`: an ``int`` (its index in
the env's ``PHASES`` tuple; ``torch.tensor``, ``numpy`` and ``json`` see the plain integer)
that prints as its name and compares equal to it, so ``info["phase"] == "play"`` reads as
before.
"""

from __future__ import annotations

from typing import Iterable


class Named(int):
    """An ``int`` with a name: ``str()`` / f-strings give the name, ``==`` with a string
    compares the name, everything else (arithmetic, hashing, ``numpy``, ``torch``,
    ``json``) sees the integer."""

    name: str

    def __new__(cls, value: int, name: str) -> "Named":
        """``Named(1, "play")``."""
        obj = super().__new__(cls, value)
        obj.name = str(name)
        return obj

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return other == self.name
        return int(self) == other

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = int.__hash__

    def __str__(self) -> str:
        return self.name

    __format__ = object.__format__  # f"{phase}" is the name (format specs: use int(phase))

    def __repr__(self) -> str:
        return f"Named({int(self)}, {self.name!r})"

    def __reduce__(self):
        return (Named, (int(self), self.name))


def named_codes(names: Iterable[str]) -> tuple[Named, ...]:
    """``("auction", "play")`` -> ``(Named(0, "auction"), Named(1, "play"))``: one value per
    name, made once (an info entry then costs no allocation per step)."""
    return tuple(Named(i, n) for i, n in enumerate(names))
