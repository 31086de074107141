"""`scim-edge practice`: self-practice on an index; fits its reader and its Critic."""

from __future__ import annotations

import argparse

from scim_edge.commands._args import nonempty, positive_int, worker_count
from scim_edge.commands._output import print_json
from scim_edge.commands._preflight import check_index


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "practice",
        help="make questions from an index's passages, run them, fit the reader and the Critic",
        description="Self-practice (SIM-RAG §3.2): questions made from the index's own "
        "sentences are run through the loop and labelled; the extractive reader's weights "
        "and the Critic are fitted on them and stored in INDEX/practice/. Rerunning with "
        "the same arguments resumes an interrupted run.",
    )
    p.add_argument("--index", type=nonempty, metavar="NAME|DIR", help="index name or directory")
    p.add_argument("--questions", type=positive_int, default=6000, metavar="N",
                   help="practice questions to make (default 6000, at least 50)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--workers", type=worker_count, default=None, metavar="N",
                   help="processes for the two long passes (default: every core)")  # fmt: skip
    p.add_argument("--no-critic", action="store_true", help="fit the reader only")
    p.add_argument("--json", action="store_true", help="print the practice manifest as JSON")
    p.set_defaults(func=run)


# more practice questions than any index gives are a typo's extra digits
MOST_QUESTIONS = 1_000_000


def run(args: argparse.Namespace) -> int:
    from index_builder.build import default_workers
    from scim_edge.engine import Engine
    from scim_edge.errors import UserError
    from scim_edge.practice.runner import MIN_PAIRS, PracticeOptions, run_practice, similarity_label
    from scim_edge.practice.store import practice_dir
    from scim_edge.settings import load_settings
    from scim_edge.trained_critic import ASKED_MIX_NOTE, CRITIC_FILE

    if args.questions < MIN_PAIRS:  # said of the request, not blamed on the index
        raise UserError(
            f"--questions must be at least {MIN_PAIRS} (got {args.questions}): fewer are "
            "too few to fit weights on"
        )
    if args.questions > MOST_QUESTIONS:  # a typo's extra digits
        raise UserError(f"--questions must be at most {MOST_QUESTIONS:,} (got {args.questions})")
    settings = load_settings(overrides={"index": args.index, "model": "extractive"})
    check_index(settings.index)
    engine = Engine.open(settings)
    index_dir = engine.retriever.path
    had_critic = (practice_dir(index_dir) / CRITIC_FILE).is_file()
    opts = PracticeOptions(questions=args.questions, seed=args.seed,
                           train_critic=not args.no_critic,
                           workers=args.workers or default_workers())  # fmt: skip
    with _progress() as report:
        result = run_practice(engine, index_dir, opts, report)
    if args.json:
        print_json(result.manifest)
        return 0
    m = result.manifest
    reader = m["reader"]
    critic = m.get("critic") or {}
    print(f"Practice set written to {result.path}")
    print(f"  questions      {m['pairs']['total']} ({m['pairs']['train']} train, "
          f"{m['pairs']['heldout']} held out), {m['rounds']} loop rounds")  # fmt: skip
    top1 = reader.get("heldout_top1_given_present", 0)
    if reader.get("used") == "shipped":
        own = reader.get("own_heldout_top1") or 0.0
        print(f"  reader         the shipped weights stay: they pick {top1:.1%} of the held-out "
              f"answers among the candidates, those fitted here {own:.1%}")  # fmt: skip
    else:
        print(f"  reader         fitted here: it picks {top1:.1%} of the held-out answers "
              f"among the candidates")  # fmt: skip
    if reader.get("given_names"):
        print(f"                 {reader['given_names']} given names: the index's people's and "
              f"those the shipped reader knows")  # fmt: skip
    if reader.get("sentence_similarity"):
        model = similarity_label(str(reader["sentence_similarity"]))
        print(f"                 sentences measured against the question with {model}, "
              f"the index's vectors")  # fmt: skip
    h = m["heldout_round1"]
    if h.get("em") is not None:
        print(f"  first round    held-out EM {h['em']:.1%}, answer in passages "
              f"{h['answer_in_passages']:.1%}")  # fmt: skip
    if critic:
        shipped = critic.get("used") == "shipped"
        which = "the shipped one, " if shipped else ""
        print(
            f"  critic         {which}held-out AUROC {critic.get('auroc', 0):.3f}, "
            f"ECE {critic.get('ece', 0):.3f}, accuracy {critic.get('accuracy', 0):.1%} "
            f"({ASKED_MIX_NOTE})"
        )
        if shipped:
            own = critic.get("own_brier") or 0.0
            print(f"                 it judged this index's held-out rounds better than the "
                  f"Critic fitted here (Brier {critic.get('brier', 0):.3f} against "
                  f"{own:.3f}), so none is written and it stays")  # fmt: skip
    if not critic and had_critic:  # --no-critic: the new practice set has none
        print("  critic         none fitted (--no-critic); the index's earlier Critic went "
              "with its practice set: run practice without --no-critic to fit one")  # fmt: skip
    print(f"  time           {result.timings.get('total_s', 0):.0f} s")
    return 0


class _progress:
    """The project's one progress reporter, a task per stage: a bar on a terminal, a line
    at each tenth of the way otherwise."""

    def __enter__(self):
        self.tasks: dict[str, object] = {}
        return self.report

    def report(self, stage: str, done: int, total: int) -> None:
        from index_builder.progress import TaskProgress

        task = self.tasks.get(stage)
        if task is None:
            task = self.tasks[stage] = TaskProgress(f"practice: {stage}", unit="steps")
        task(done, total)

    def __exit__(self, *exc) -> None:
        for task in self.tasks.values():
            task.abort()  # type: ignore[attr-defined]
