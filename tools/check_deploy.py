"""Check the sweep's engine configs: the GitHub Actions workflow's matrix lists
every shard of the plan it makes, and the Kubernetes Job is indexed with one
completion per shard, each running its own shard.

    python3 tools/check_deploy.py    (needs PyYAML: pip install pyyaml)

Prints one line per problem and exits 1 when there is one.
"""

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def workflow(problems: list) -> None:
    wf = yaml.safe_load((ROOT / ".github/workflows/retention-sweep.yml").read_text())
    shards = int(wf["env"]["SHARDS"])
    jobs = wf["jobs"]
    if '--shards "$SHARDS"' not in " ".join(s.get("run", "") for s in jobs["plan"]["steps"]):
        problems.append("workflow: the plan job does not make a plan of $SHARDS shards")
    matrix = jobs["shard"]["strategy"]["matrix"]["shard"]
    if sorted(matrix) != list(range(shards)):
        problems.append(f"workflow: the matrix lists shards {matrix}, the plan has 0 to {shards - 1}")
    runs = " ".join(s.get("run", "") for s in jobs["shard"]["steps"])
    if "--shard" not in runs or "matrix.shard" not in runs:
        problems.append("workflow: the shard job does not run --shard ${{ matrix.shard }}")
    if jobs["merge"].get("needs") != "shard":
        problems.append("workflow: the merge job does not wait for every shard")
    if "harness merge" not in " ".join(s.get("run", "") for s in jobs["merge"]["steps"]):
        problems.append("workflow: the merge job does not run harness merge")


def kubernetes(problems: list) -> None:
    job = yaml.safe_load((ROOT / "deploy/kubernetes/retention-sweep.yaml").read_text())
    spec = job["spec"]
    shards = int(job["metadata"]["annotations"]["lens/shards"])
    if job["kind"] != "Job" or spec.get("completionMode") != "Indexed":
        problems.append("kubernetes: not an indexed Job")
    if spec.get("completions") != shards or spec.get("parallelism") != shards:
        problems.append(f"kubernetes: completions and parallelism must be {shards}, one per shard")
    command = " ".join(spec["template"]["spec"]["containers"][0]["args"])
    if '--shard "$JOB_COMPLETION_INDEX"' not in command:
        problems.append("kubernetes: the pod does not run shard $JOB_COMPLETION_INDEX")


def main() -> None:
    problems: list = []
    workflow(problems)
    kubernetes(problems)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
