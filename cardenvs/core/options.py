"""Validation of game options and deal parameters: clear errors that name the option."""

from __future__ import annotations

from typing import Any, Iterable, Optional

import numpy as np


def check_choice(name: str, value, allowed: Iterable) -> None:
    """``ValueError`` unless ``value`` is one of ``allowed``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, allowed))}")


def check_int(name: str, v, lo: int, hi: int) -> None:
    """``TypeError`` unless ``v`` is an int (not a bool); ``ValueError`` unless lo <= v <= hi."""
    if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{name}={v} is out of range {lo}..{hi}")


def check_bool(name: str, v) -> None:
    """``TypeError`` unless ``v`` is a bool."""
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(v).__name__}")


MAX_SEED = 2**63 - 1


def check_seed(seed: Any, name: str = "seed") -> int:
    """``seed`` as an int in ``[0, 2**63 - 1]``: ``TypeError`` for a non-int (a bool, a
    float, a string), ``ValueError`` for a negative or too large one."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{name} must be a non-negative int, got {type(seed).__name__} {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{name} must be >= 0 and at most 2**63 - 1, got {seed}")
    return int(seed)


def checked_options(values: dict, defaults: dict, allowed: dict) -> dict:
    """``values`` (every option of a game, e.g. its constructor's keywords) checked and
    normalised by the type of each default: a bool must be a bool, an int an int within
    ``allowed[name] = (lo, hi)``, anything else one of ``allowed[name]`` (a tuple of choices;
    an int whose text is one of a tuple of text choices counts as that text: ``deck=15``).
    Raises ``TypeError`` / ``ValueError`` naming the option (see :func:`check_bool` ...)."""
    out: dict[str, Any] = {}
    for name, default in defaults.items():
        v = values[name]
        if isinstance(default, bool):
            check_bool(name, v)
            out[name] = bool(v)
        elif isinstance(default, int):
            check_int(name, v, *allowed[name])
            out[name] = int(v)
        else:
            choices = allowed[name]
            if (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                    and str(v) in choices and all(isinstance(c, str) for c in choices)):
                v = str(v)  # deck=15 from a command line: the choice '15'
            check_choice(name, v, choices)
            out[name] = v
    return out


def set_env_args(env: Any, render_mode: Optional[str], illegal: str, illegal_reward: float,
                 info_legal_actions: bool) -> None:
    """Check the arguments every cardenvs environment takes (:class:`cardenvs.core.aec.CardEnv`, the
    single-agent :class:`cardenvs.wrappers.SeatEnv`) and set them on ``env``:
    ``render_mode`` (one of ``env.metadata["render_modes"]`` or ``None``), ``illegal``
    (``"lose"`` or ``"raise"``), ``illegal_reward`` (a number, stored as a float) and
    ``info_legal_actions`` (a bool).  A ``ValueError`` / ``TypeError`` names a bad one."""
    modes = env.metadata["render_modes"]
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode={render_mode!r}; choose from {modes}")
    if illegal not in ("lose", "raise"):
        raise ValueError(f"illegal={illegal!r}; choose 'lose' (PettingZoo's behaviour) or 'raise'")
    if isinstance(illegal_reward, (bool, np.bool_)) or not isinstance(
            illegal_reward, (int, float, np.integer, np.floating)):
        raise TypeError(f"illegal_reward must be a number, got {type(illegal_reward).__name__}")
    if not isinstance(info_legal_actions, (bool, np.bool_)):
        raise TypeError(f"info_legal_actions must be a bool, got "
                        f"{type(info_legal_actions).__name__}")
    env.info_legal_actions = bool(info_legal_actions)
    env.render_mode = render_mode
    env.illegal = illegal
    env.illegal_reward = float(illegal_reward)


#: the arguments every cardenvs environment takes besides the game's options
#: (:func:`set_env_args`): offered as close matches of a misspelt option too
ENV_ARGS = ("render_mode", "illegal", "illegal_reward", "info_legal_actions")


def check_option_names(game: str, env_module: str, options: Iterable[str],
                       known: Iterable[str], arguments: Iterable[str] = ENV_ARGS) -> None:
    """``ValueError`` unless every name in ``options`` is one of the game's options ``known``:
    the message names the game and its environment (``cardenvs.<env_module>``), lists the
    game's options and the closest names (:func:`difflib.get_close_matches` over the options
    and the environments' own ``arguments``), instead of the bare ``TypeError`` of a keyword
    the game's class does not take."""
    import difflib

    known = tuple(known)
    unknown = [str(k) for k in options if k not in known]
    if not unknown:
        return
    name = unknown[0]
    close = difflib.get_close_matches(name, (*known, *arguments), n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    more = f" (nor {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
    raise ValueError(
        f"cardenvs.{env_module} (game {game!r}) has no option {name!r}{more}{hint}. Its "
        f"options: {', '.join(known) if known else 'none'} (the AEC and SeatEnv environments "
        f"also take {', '.join(arguments)})")
