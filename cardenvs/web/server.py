"""``cardenvs serve``: the web app, a Starlette application served by uvicorn.

Routes: ``/`` (the page), ``/static/...`` (its script and style sheets, from this package:
no CDN, the page works offline), ``/api/games`` (the games, their options and the agents,
as JSON) and the websocket ``/ws``.  Each websocket connection is one browser session with
its own :class:`~cardenvs.web.session.GameSession`.  Messages are JSON objects with a
``type``:

from the browser
  ``start`` (``game``, ``options``, ``seat``: a seat number or ``null`` to watch, ``agents``:
  a spec per seat or a comma-separated string, ``seed``, ``delay``), ``act`` (``id``: an
  action id, ``turn``: the turn it answers), ``speed`` (``delay`` in seconds), ``pause``,
  ``resume``, ``sync`` (send the whole table again);
from the server
  ``state`` (:meth:`GameSession.view`) after every move (an agent's with ``think_ms``, the
  server's time for it: decision, step and message), ``error`` (``message``) for a bad
  spec, option or move (the game is unchanged and the server keeps running).  The first
  ``state`` of a game carries the whole ``replay``, the next ones a ``delta`` to the last one
  sent (the whole replay again when earlier records change, and at the end).

The agents' moves are computed in worker threads, one move at a time per session, and each is
sent ``delay`` seconds after the previous message (``0.6`` s by default: the time to see it).
A search's numba kernels (worlds, rollouts) run without the GIL, so the sessions' searches use
every core, and each search decides by :data:`SEARCH_DEADLINE` seconds after its move was asked
for (:attr:`cardenvs.agents.search.SearchAgent.deadline`: its rollouts in chunks while the
time lasts), so that a move appears within 0.5 s also where many sessions share the cores
(``benchmarks/web_load.md`` measures it); a search that ends in time plays the move it plays
without a deadline.
While the app runs, numpy's BLAS uses one thread (:func:`cardenvs.arena.one_blas_thread`):
the sessions' threads are the parallelism; a multi-threaded BLAS called from many threads at
once spends its time waking and waiting for its own threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from .session import GameSession

STATIC = Path(__file__).resolve().parent / "static"
#: seconds between the agents' moves in play (and watch, unless the browser sets a speed)
DEFAULT_DELAY = 0.6
MAX_DELAY = 30.0
#: seconds from the server asking an agent for a move to the end of a search's decision
#: (:attr:`cardenvs.agents.search.SearchAgent.deadline`); the rest of 0.5 s is for the step,
#: the message and the wait for a core
SEARCH_DEADLINE = 0.25

log = logging.getLogger("cardenvs.web")
#: sessions are made one at a time: making agents may import the agents package or specialize
#: numba kernels on first use, neither of which is safe from two threads at once
_MAKING = threading.Lock()


def _new_session(*args) -> GameSession:
    with _MAKING:
        return GameSession(*args)


@lru_cache(maxsize=1)
def games_info() -> dict:
    """What ``/api/games`` answers: per game its title, players, options with their defaults,
    roles and action blocks; the registered agent names."""
    import cardenvs

    from ..arena import import_agents
    from ..replay import ROLE_NAMES

    games = {}
    for name in cardenvs.GAMES:
        g = cardenvs.make_game(name)
        games[name] = {"title": g.info.title, "players": g.n_players, "teams": g.info.teams,
                       "options": dict(g.info.options), "roles": ROLE_NAMES.get(name),
                       "blocks": list(g.blocks)}
    return {"games": games, "agents": list(import_agents().AGENTS)}


def _delay(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and 0 <= value <= MAX_DELAY):
        raise ValueError(f"delay must be a number of seconds in [0, {MAX_DELAY:g}], got {value!r}")
    return float(value)


class Connection:
    """One websocket: its session, the task playing the agents' moves, the speed."""

    def __init__(self, ws: WebSocket, delay: float):
        self.ws = ws
        self.delay = delay
        self.session: Optional[GameSession] = None
        self.runner: Optional[asyncio.Task] = None
        self.lock = asyncio.Lock()  # one use of the session at a time
        self.send_lock = asyncio.Lock()
        self.running = asyncio.Event()  # cleared while paused
        self.running.set()
        #: the ``sync`` of the last state message sent (``None``: send the whole replay)
        self.synced: Optional[list] = None

    async def send(self, msg: dict) -> None:
        async with self.send_lock:
            await self.ws.send_text(json.dumps(msg, ensure_ascii=False))

    async def error(self, message: str) -> None:
        await self.send({"type": "error", "message": message})

    async def send_view(self, session: GameSession, think_s: Optional[float] = None,
                        full: bool = False) -> None:
        """Send the table (a delta to the last one sent, or with ``full`` the whole table);
        ``think_s``: the agent's time for the move it shows, sent as ``think_ms`` with the time
        to prepare the message added.  Whole or delta is decided under the lock: a view being
        prepared meanwhile cannot turn a ``sync`` answer into a delta."""
        async with self.lock:
            if session is not self.session:
                return  # a new game has started meanwhile
            t0 = time.perf_counter()
            view = await run_in_threadpool(session.view, None if full else self.synced)
            if think_s is not None:
                view["think_ms"] = round(1000 * (think_s + time.perf_counter() - t0), 1)
            await self.send(view)
            self.synced = view["sync"]

    async def serve(self) -> None:
        await self.ws.accept()
        try:
            while True:
                text = await self.ws.receive_text()
                try:
                    msg = json.loads(text)
                except json.JSONDecodeError:
                    await self.error("not a JSON message")
                    continue
                if not isinstance(msg, dict):
                    await self.error("a message is a JSON object with a 'type'")
                    continue
                try:
                    await self.handle(msg)
                except (ValueError, TypeError) as e:
                    await self.error(str(e))
                except Exception as e:  # a fault below (an agent, the engine): say so, go on
                    log.exception("message %r failed", msg.get("type"))
                    await self.error(f"the server failed on this request: "
                                     f"{type(e).__name__}: {e}")
        except WebSocketDisconnect:
            pass
        finally:
            await self.stop()

    async def handle(self, msg: dict) -> None:
        kind = msg.get("type")
        if kind == "start":
            await self.start(msg)
        elif kind == "act":
            await self.act(msg.get("id"), msg.get("turn"))
        elif kind == "speed":
            self.delay = _delay(msg.get("delay"))
        elif kind == "pause":
            self.running.clear()
        elif kind == "resume":
            self.running.set()
        elif kind == "sync":
            if self.session is None:
                raise ValueError("no game yet: start one")
            await self.send_view(self.session, full=True)
        else:
            raise ValueError(f"unknown message type {kind!r}; expected start, act, speed, "
                             f"pause, resume or sync")

    async def stop(self) -> None:
        """End the agents' task (after the move in progress, which finishes in its thread)."""
        if self.runner is not None:
            self.runner.cancel()
            try:
                await self.runner
            except (asyncio.CancelledError, Exception):
                pass
            self.runner = None

    async def start(self, msg: dict) -> None:
        seat = msg.get("seat", 0)
        delay = _delay(msg["delay"]) if msg.get("delay") is not None else self.delay
        await self.stop()
        try:
            session = await run_in_threadpool(
                _new_session, msg.get("game"), msg.get("options") or {}, seat,
                msg.get("agents", "rules"), msg.get("seed"))
        except (ValueError, TypeError) as e:
            raise ValueError(f"cannot start the game: {e}") from None
        self.session, self.delay, self.synced = session, delay, None
        self.running.set()
        await self.send_view(session)
        self.runner = asyncio.create_task(self.play_agents(session))

    async def act(self, action: Any, turn: Any) -> None:
        asked = time.perf_counter()  # the next agent's move is asked for from now on
        session = self.session
        if session is None:
            raise ValueError("no game yet: start one")
        async with self.lock:
            await run_in_threadpool(session.act, action, turn)
        await self.send_view(session)
        await self.stop()
        self.runner = asyncio.create_task(self.play_agents(session, asked))

    async def play_agents(self, session: GameSession, asked: Optional[float] = None) -> None:
        """Play the agents' moves until the player's turn or the end, one message each;
        ``asked``: when the first move was asked for (the player's move arrived), the start
        of its :data:`SEARCH_DEADLINE` (the others' start when they are asked for)."""
        loop = asyncio.get_running_loop()
        last = loop.time()
        try:
            while not session.done and not session.players_turn:
                if not self.running.is_set():
                    asked = None  # paused: the move is asked for when the game resumes
                await self.running.wait()
                async with self.lock:
                    t0 = time.perf_counter()
                    start = t0 if asked is None else min(asked, t0)
                    asked = None
                    await run_in_threadpool(session.agent_step, start + SEARCH_DEADLINE)
                    think = time.perf_counter() - t0  # the agent's decision and the step
                wait = self.delay - (loop.time() - last)
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.running.wait()
                await self.send_view(session, think)  # think_ms adds the message's time
                last = loop.time()
        except asyncio.CancelledError:
            raise
        except (WebSocketDisconnect, RuntimeError):
            pass  # the browser went away
        except Exception as e:  # an agent failed: say so, keep the server up
            log.exception("agent move failed")
            try:
                await self.error(f"an agent failed: {type(e).__name__}: {e}")
            except Exception:
                pass


def create_app(delay: float = DEFAULT_DELAY) -> Starlette:
    """The Starlette application; ``delay`` is the default pause before each agent move."""
    delay = _delay(delay)

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def games(request: Request):
        return JSONResponse(await run_in_threadpool(games_info))

    async def ws(websocket: WebSocket):
        await Connection(websocket, delay).serve()

    @contextlib.asynccontextmanager
    async def lifespan(app):
        from ..arena import one_blas_thread

        with one_blas_thread():
            yield

    return Starlette(routes=[
        Route("/", index),
        Route("/api/games", games),
        WebSocketRoute("/ws", ws),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ], lifespan=lifespan)


def serve(host: str = "127.0.0.1", port: int = 8000, delay: float = DEFAULT_DELAY) -> None:
    """Run the app with uvicorn on ``host:port`` (``127.0.0.1``: this machine only)."""
    import uvicorn

    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be 0..65535, got {port!r}")
    print(f"cardenvs serve: open http://{host}:{port}/ in a browser (Ctrl-C stops)", flush=True)
    uvicorn.run(create_app(delay), host=host, port=port, log_level="warning",
                ws="websockets-sansio")
