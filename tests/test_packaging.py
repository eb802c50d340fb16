"""Packaging and deploy files: a plain install carries the bundled digest; installs are pinned;
the image and the Kubernetes manifests hold no secrets. Docker is not available here, so the
deploy files are checked by reading them."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_a_plain_install_serves_the_bundled_digest_and_digest_dir_overrides_it(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("vllm_digest-*.whl"))
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)  # a pure-Python wheel: unpacking it is installing it
    shipped = sorted(p.name for p in (site / "chatbot" / "digests").iterdir())
    assert shipped == sorted(p.name for p in (ROOT / "digests").iterdir())
    assert (site / "chatbot" / "slack" / "data" / "strings.yaml").is_file()  # the interface words

    env = {k: v for k, v in os.environ.items() if k not in ("DIGEST_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    where = tmp_path / "elsewhere"
    where.mkdir()
    code = (
        "import chatbot, sys; from chatbot.cli import main; print(chatbot.__file__); sys.exit(main(['list']))"
    )
    listed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=where)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith(str(site))  # the installed copy, not the checkout
    assert len(lines[1:]) == 8 and any("DeepStack" in line for line in lines[1:])

    own = tmp_path / "own"
    own.mkdir()
    (own / "one.txt").write_text("o/r\n\n自己的条目\n\n值得精读。\n", encoding="utf-8")
    overridden = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "DIGEST_DIR": str(own)},
        cwd=where,
    )
    assert overridden.stdout.splitlines()[1:] and "自己的条目" in overridden.stdout.splitlines()[1]
    assert len(overridden.stdout.splitlines()) == 2


def test_installs_are_pinned_and_the_tools_bounded() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {
        line.split("==")[0].lower().replace("_", "-")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    wanted = project["dependencies"] + project["optional-dependencies"]["postgres"]
    for requirement in wanted:
        name = requirement.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower()
        assert name.replace("_", "-") in pins, f"{name} is not pinned in constraints.txt"
    dev = {r.split(">")[0].split("<")[0]: r for r in project["optional-dependencies"]["dev"]}
    assert "<" in dev["ruff"] and "<" in dev["mypy"]
    assert not any(r.startswith("psycopg") for r in project["dependencies"])  # an extra only
    makefile = (ROOT / "Makefile").read_text()
    assert "-c constraints.txt" in makefile and ".[dev,postgres]" in makefile


def test_the_image_installs_dependencies_before_the_code_and_ignores_local_secrets() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    steps = [line for line in dockerfile.splitlines() if line.startswith(("COPY", "RUN"))]
    first_code = next(i for i, step in enumerate(steps) if step.startswith("COPY chatbot"))
    manifest = next(i for i, step in enumerate(steps) if step.startswith("COPY pyproject.toml"))
    install = next(i for i, step in enumerate(steps) if step.startswith("RUN") and i > manifest)
    assert "constraints.txt" in steps[manifest] and manifest < install < first_code
    assert "'.[postgres]'" in dockerfile and "-c constraints.txt" in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    for name in (".env", ".venv/", "*.db", ".git/"):
        assert name in ignored


def test_the_kubernetes_ingress_exposes_only_slack_events() -> None:
    """Only Slack's request URL is reachable from outside: no probe, no /metrics (on METRICS_PORT)."""
    (ingress,) = yaml.safe_load_all((ROOT / "deploy" / "k8s" / "ingress.yaml").read_text())
    paths = [path for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
    assert [(p["path"], p["pathType"]) for p in paths] == [("/slack/events", "Exact")]
    assert "defaultBackend" not in ingress["spec"]
    service = yaml.safe_load((ROOT / "deploy" / "k8s" / "service.yaml").read_text())
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    assert paths[0]["backend"]["service"] == {"name": service["metadata"]["name"], "port": {"name": "http"}}


def test_kubernetes_ships_no_secret_and_splits_the_probes() -> None:
    documents = [
        doc
        for path in sorted((ROOT / "deploy" / "k8s").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]
    kinds = {doc["kind"] for doc in documents}
    assert "Secret" not in kinds and "PodDisruptionBudget" in kinds
    deployment = next(doc for doc in documents if doc["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    env = {e["name"]: e.get("value") for e in container["env"]}
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == env["DIGEST_DIR"])
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert "configMap" in volume and "subPath" not in mount
    assert (
        env["METRICS_PORT"] == deployment["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"]
    )
    readme = (ROOT / "deploy" / "README.md").read_text()
    assert "kubectl create secret generic vllm-digest" in readme and "kubectl create configmap" in readme
