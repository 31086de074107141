"""`scim-edge critic train|list|verify`: the trained Critic (SIM-RAG §3.3)."""

from __future__ import annotations

import argparse
from pathlib import Path

from scim_edge.commands._args import missing_command, nonempty
from scim_edge.commands._output import print_json
from scim_edge.commands._preflight import check_index


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("critic", help="train, list and verify the Critic that judges answers")
    csub = p.add_subparsers(dest="critic_command", metavar="SUBCOMMAND")
    t = csub.add_parser(
        "train",
        help="fit a Critic on an index's practice traces and install it",
        description="Fit the Critic on the practice traces of an index (run `scim-edge "
        "practice` first) and install it in the model store; with --fine-tune, fine-tune a "
        "Flan-T5 model as the Critic instead (needs the [export] extra).",
    )
    t.add_argument("--index", type=nonempty, metavar="NAME|DIR",
                   help="index whose practice set to train on")  # fmt: skip
    t.add_argument(
        "--name", type=nonempty, metavar="NAME", help="store name (default critic-INDEX)"
    )
    t.add_argument("--fine-tune", type=nonempty, metavar="MODEL_DIR",
                   help="a Hugging Face T5 directory")  # fmt: skip
    t.add_argument("--steps", type=int, default=200, help=argparse.SUPPRESS)
    t.add_argument("--force", action="store_true", help="replace an installed Critic")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=run_train)
    ls = csub.add_parser("list", help="list the Critics this installation can use")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)
    v = csub.add_parser("verify", help="check that every Critic loads and matches its hashes")
    v.add_argument("name", nargs="?")
    v.set_defaults(func=run_verify)
    p.set_defaults(func=lambda args: missing_command(p))


def _traces(index: str | None):
    from scim_edge.errors import UserError
    from scim_edge.practice import store
    from scim_edge.retrieval import resolve_index_dir

    check_index(index)
    index_dir = resolve_index_dir(index)
    path = store.practice_dir(index_dir) / "traces.jsonl"
    if not path.is_file():
        raise UserError(
            f"index '{index_dir.name}' has no practice set",
            hint=f"run `scim-edge practice --index {index_dir.name}` first",
        )
    try:
        manifest = store.read_json(store.practice_dir(index_dir) / "manifest.json")
        rows = store.read_jsonl(path)
        if not all(
            isinstance(r, dict) and {"split", "correct", "features"} <= set(r) for r in rows
        ):
            raise ValueError("a round lacks split, correct or features")
    except (OSError, ValueError) as e:
        raise UserError(
            f"the practice set of index '{index_dir.name}' is damaged "
            f"({' '.join(str(e).split())[:120]})",
            hint=f"re-create it with `scim-edge practice --index {index_dir.name}`",
        ) from None
    return index_dir, rows, manifest


def _same_features(index_dir: Path, manifest: dict) -> None:
    """Traces made for other Critic features would fit a Critic blind to the new ones."""
    from scim_edge.errors import UserError
    from scim_edge.practice.runner import features_key

    if manifest.get("params", {}).get("features") != features_key():
        raise UserError(
            f"the practice set of index '{index_dir.name}' was made by another version of "
            "scim-edge, for other features",
            hint=f"re-create it with `scim-edge practice --index {index_dir.name}`",
        )


def run_train(args: argparse.Namespace) -> int:
    from scim_edge.critic_store import check_replaceable, install
    from scim_edge.settings import load_settings
    from scim_edge.trained_critic import ASKED_MIX_NOTE, train_from_rows

    if args.name is not None:  # a name refused is said before the practice set is read
        check_replaceable(args.name, args.force)
    if args.fine_tune and not Path(args.fine_tune).expanduser().is_dir():
        from scim_edge.errors import UserError

        where = Path(args.fine_tune).expanduser()
        raise UserError(
            f"{where} is a file" if where.exists() else f"no such directory: {where}",
            hint="--fine-tune takes the folder of a Flan-T5 model in Hugging Face form",
        )
    settings = load_settings(overrides={"index": args.index})  # --index, env, config
    index_dir, rows, manifest = _traces(settings.index)
    name = args.name or f"critic-{index_dir.name}"
    if args.name is None:
        check_replaceable(name, args.force)
    if args.fine_tune:
        from scim_edge.critic_finetune import fine_tune
        from scim_edge.practice import store

        pairs = store.read_jsonl(store.practice_dir(index_dir) / "pairs.jsonl")
        questions = {str(p["id"]): str(p["question"]) for p in pairs}
        path = fine_tune(args.fine_tune, rows, name=name, questions=questions,
                         steps=args.steps, force=args.force)  # fmt: skip
        print(f"installed fine-tuned Critic '{name}' at {path}")
        return 0
    _same_features(index_dir, manifest)
    loop = manifest.get("params", {}).get("loop", "fixed-3")
    critic = train_from_rows(
        rows, generator=str(manifest.get("generator", "")), settings=settings.replace(loop=loop)
    )
    path = install(critic, name, source=f"practice:{index_dir.name}", force=args.force)
    h = critic.heldout
    if args.json:
        print_json({"name": name, "path": str(path), **critic.meta})
        return 0
    print(f"installed Critic '{name}' at {path}")
    print(f"  generator  {critic.generator}")
    print(f"  held out   {h.get('n', 0)} rounds: AUROC {h.get('auroc', 0):.3f}, "
          f"accuracy {h.get('accuracy', 0):.1%}, ECE {h.get('ece', 0):.3f} "
          f"({ASKED_MIX_NOTE})")  # fmt: skip
    print(f"  use it     scim-edge ask QUESTION --critic-model {name}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from scim_edge.critic_store import entries

    found = entries()
    if args.json:
        print_json([e.to_dict() for e in found])
        return 0
    if not found:
        print("no Critic installed (scim-edge practice trains one)")
        return 0
    width = max(len(e.name) for e in found)
    for e in found:
        if e.problem:
            print(f"{e.name:<{width}}  {e.where:<7}  PROBLEM: {e.problem}")
            continue
        if e.fine_tuned:  # no held-out figures of the trained Critic's kind
            print(f"{e.name:<{width}}  {e.where:<7}  fine-tuned Flan-T5, for --critic model  "
                  f"{e.path}")  # fmt: skip
            continue
        h = e.heldout or {}
        print(f"{e.name:<{width}}  {e.where:<7}  for {e.generator or '?':<10}  "
              f"AUROC {h.get('auroc', 0):.3f}  ECE {h.get('ece', 0):.3f}  {e.path}")  # fmt: skip
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from scim_edge.critic_store import verify

    bad = 0
    for entry, problems in verify(args.name):
        if problems:
            bad += 1
            for p in problems:
                print(f"{entry.name}: {p}")
        else:
            print(f"{entry.name}: ok")
    return 1 if bad else 0
