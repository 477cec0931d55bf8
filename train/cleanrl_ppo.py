"""CleanRL-style masked PPO self-play over the batched engine, in one file.

Every seat of ``--n-envs`` games (:class:`cardenvs.vector.VectorGame`) is played by one shared
policy (:class:`cardenvs.torch_policy.LegalActionNet`: it scores the legal ids of the seat to
move, so the action is a slot among them and nothing of size 28,241 is ever built; the seat's
role is in its observation).  Turn-based bookkeeping: :func:`cardenvs.multiagent.file_by_seat`
files each recorded move under its seat and pays it what the seat received until its next
move (the end-of-game pay arrives after the other seats' moves), and
:func:`cardenvs.multiagent.seat_gae` computes advantages along each seat's own moves.  The
update is the usual clipped PPO with value loss and entropy bonus.

    python train/cleanrl_ppo.py doudizhu --updates 30 --option reward=win_loss

At the end the policy plays seat 0 against random seats (``--eval-games`` games, also played
by a random seat 0 on the same deals) and prints both.
"""

from __future__ import annotations

import argparse
import time
from typing import Optional

import numpy as np
import torch

from cardenvs.multiagent import file_by_seat, seat_gae
from cardenvs.torch_policy import LegalActionNet, trim_legal
from cardenvs.vector import VectorGame


def parse_options(items: list[str]) -> dict:
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep:
            raise ValueError(f"--option wants key=value, got {it!r}")
        for cast in (int, float):
            try:
                v = cast(v)
                break
            except ValueError:
                pass
        out[k] = v
    return out


def pad(rows: list[np.ndarray]) -> np.ndarray:
    """Stack ``(N, w_t)`` legal-id rows into ``(T, N, max w)`` padded with -1."""
    W = max(r.shape[1] for r in rows)
    out = np.full((len(rows), rows[0].shape[0], W), -1, np.int64)
    for t, r in enumerate(rows):
        out[t, :, :r.shape[1]] = r
    return out


@torch.no_grad()
def act(net: LegalActionNet, obs: np.ndarray, legal: np.ndarray, greedy: bool = False):
    o = torch.as_tensor(obs)
    lg = torch.as_tensor(legal)
    logits, value = net(o, lg)
    dist = torch.distributions.Categorical(logits=logits)
    slot = logits.argmax(dim=1) if greedy else dist.sample()
    return slot.numpy(), dist.log_prob(slot).numpy(), value.numpy()


def evaluate(net: LegalActionNet, game: str, options: dict, n_games: int, seed: int,
             seat: int = 0, n_envs: int = 64, policy: bool = True) -> np.ndarray:
    """Seat ``seat``'s pay in ``n_games`` games against uniformly random seats (the first
    ``ceil(n_games / n_envs)`` games of each slot); ``policy=False``: a random seat too."""
    vg = VectorGame(game, n_envs, **options)
    vg.reset(seed=seed)
    per = -(-n_games // n_envs)
    got: list[list[float]] = [[] for _ in range(n_envs)]
    while min(len(g) for g in got) < per:
        acts = vg.random_actions()
        mine = np.flatnonzero(vg.seat == seat)
        if policy and mine.size:
            legal = trim_legal(vg.legal[mine], vg.n_legal[mine])
            slot, _, _ = act(net, vg.obs[mine], legal)
            acts[mine] = legal[np.arange(mine.size), slot]
        rew, done = vg.step(acts)
        for i in np.flatnonzero(done):
            got[i].append(float(rew[i, seat]))
    return np.asarray([r for g in got for r in g[:per]])[:n_games]


def train(game: str = "wakeng", *, n_envs: int = 64, n_steps: int = 64, updates: int = 10,
          epochs: int = 4, minibatches: int = 4, lr: float = 1e-3, gamma: float = 1.0,
          lam: float = 0.95, clip: float = 0.2, ent_coef: float = 0.01, vf_coef: float = 0.5,
          hidden: int = 256, seed: int = 0, options: Optional[dict] = None,
          log=print) -> LegalActionNet:
    """Self-play PPO; returns the trained net (see the module docstring)."""
    options = dict(options or {})
    torch.manual_seed(seed)
    vg = VectorGame(game, n_envs, **options)
    vg.reset(seed=seed)
    net = LegalActionNet(vg.game, hidden=hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5)
    P = vg.n_players
    t0 = time.time()
    steps = 0
    for update in range(1, updates + 1):
        obs = np.zeros((n_steps, n_envs, vg.obs_size), np.float32)
        seats = np.zeros((n_steps, n_envs), np.int64)
        rewards = np.zeros((n_steps, n_envs, P), np.float32)
        dones = np.zeros((n_steps, n_envs), np.bool_)
        slots = np.zeros((n_steps, n_envs), np.int64)
        logps = np.zeros((n_steps, n_envs), np.float32)
        values = np.zeros((n_steps, n_envs), np.float32)
        legal_rows = []
        for t in range(n_steps):  # every slot has a seat to move (automatic reset)
            obs[t] = vg.obs
            seats[t] = vg.seat
            legal = trim_legal(vg.legal, vg.n_legal)
            legal_rows.append(legal.copy())
            slots[t], logps[t], values[t] = act(net, obs[t], legal)
            rew, done = vg.step(legal[np.arange(n_envs), slots[t]])
            rewards[t], dones[t] = rew, done
        steps += n_steps * n_envs
        filed = file_by_seat(seats, rewards, dones)
        adv, ret = seat_gae(values, filed, gamma, lam)
        keep = filed["valid"].reshape(-1)
        b_obs = torch.as_tensor(obs.reshape(-1, vg.obs_size)[keep])
        b_legal = torch.as_tensor(pad(legal_rows).reshape(n_steps * n_envs, -1)[keep])
        b_slot = torch.as_tensor(slots.reshape(-1)[keep])
        b_logp = torch.as_tensor(logps.reshape(-1)[keep])
        b_adv = torch.as_tensor(adv.reshape(-1)[keep], dtype=torch.float32)
        b_ret = torch.as_tensor(ret.reshape(-1)[keep], dtype=torch.float32)
        b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
        B = b_obs.shape[0]
        for _ in range(epochs):
            for idx in torch.randperm(B).chunk(minibatches):
                legal = b_legal[idx]
                legal = legal[:, :max(1, int((legal >= 0).sum(1).max()))]
                logits, v = net(b_obs[idx], legal)
                dist = torch.distributions.Categorical(logits=logits)
                logp = dist.log_prob(b_slot[idx])
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - clip, 1 + clip)).mean()
                vloss = 0.5 * ((v - b_ret[idx]) ** 2).mean()
                ent = dist.entropy().mean()
                loss = pg + vf_coef * vloss - ent_coef * ent
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
        n_done = int(dones.sum())
        log(f"update {update}/{updates}: {steps} steps, {steps / (time.time() - t0):.0f} steps/s, "
            f"{n_done} games, policy loss {pg.item():+.3f}, value loss {vloss.item():.3f}, "
            f"entropy {ent.item():.2f}")
    return net


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("game")
    ap.add_argument("--n-envs", type=int, default=64)
    ap.add_argument("--n-steps", type=int, default=64)
    ap.add_argument("--updates", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-games", type=int, default=500)
    ap.add_argument("--option", action="append", default=[], help="a game option, key=value")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    options = parse_options(args.option)
    t0 = time.time()
    net = train(args.game, n_envs=args.n_envs, n_steps=args.n_steps, updates=args.updates,
                lr=args.lr, hidden=args.hidden, seed=args.seed, options=options)
    t_train = time.time() - t0
    res = {"train_s": t_train}
    if args.eval_games:
        mine = evaluate(net, args.game, options, args.eval_games, seed=args.seed + 1)
        base = evaluate(net, args.game, options, args.eval_games, seed=args.seed + 1, policy=False)
        res.update(score=mine.mean(), win=(mine > 0).mean(), random_score=base.mean(),
                   random_win=(base > 0).mean())
        print(f"seat 0 vs random seats, {len(mine)} games: policy score {mine.mean():+.3f} "
              f"(win {100 * (mine > 0).mean():.1f}%), random seat 0 {base.mean():+.3f} "
              f"(win {100 * (base > 0).mean():.1f}%); trained {t_train:.0f} s")
    return res


if __name__ == "__main__":
    main()
