#!/usr/bin/env bash
# Offline check of the Kubernetes manifests in deploy/k8s (no cluster, no network):
#   - every kustomization under deploy/k8s renders with the pinned kubectl (its built-in kustomize);
#   - every object rendered validates against the Kubernetes API schemas of the oldest and newest
#     versions checked, strictly (an unknown field fails; so does a kind without a schema);
#   - the gateway's Deployment is coherent with how `pegboard serve` stops: probes on /readyz and
#     /healthz at the --http port, and terminationGracePeriodSeconds covering the preStop sleep,
#     --drain and the gateway's 5 s for open connections;
#   - each Service and PodDisruptionBudget selects pods rendered beside it;
#   - nothing renders a Secret (no secret is committed: the user creates it);
#   - the overlay docs/deploy/kubernetes.md shows renders and passes the same checks;
#   - controls: a copy with an unknown field, one with an unknown kind and one whose drain outlasts
#     the grace period must each be refused, so a check that stopped biting would show.
# The tools are in target/test-deps/venv-k8s (scripts/setup-test-deps.sh installs them).
# Prints one line (`k8s manifests: N passed, M failed`); exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="target/test-deps/venv-k8s"
if [ ! -x "$venv/bin/kubectl" ] || ! "$venv/bin/python" -c "import kubernetes_validate" 2>/dev/null; then
  echo "check-k8s: kubectl and kubernetes-validate are missing from $venv: run scripts/setup-test-deps.sh" >&2
  exit 2
fi
exec "$venv/bin/python" - "$venv/bin/kubectl" deploy/k8s <<'PY'
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import yaml
from kubernetes_validate import utils as kv

# The oldest and the newest Kubernetes whose schemas the manifests must satisfy.
VERSIONS = ["1.25.0", "1.37.0"]
# What the gateway gives open connections after the drain (CLOSE_GRACE in gateway/run.rs).
CLOSE_GRACE_SECS = 5
# `pegboard serve --drain`'s default.
DEFAULT_DRAIN_SECS = 30

kubectl, root = sys.argv[1], pathlib.Path(sys.argv[2])


def render(directory):
    """The objects `kubectl kustomize DIR` renders, or raises with kustomize's own message."""
    out = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("kubectl kustomize failed: " + out.stderr.strip())
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def name(obj):
    return "%s/%s" % (obj.get("kind", "?"), obj.get("metadata", {}).get("name", "?"))


def schema_errors(obj):
    errors = []
    for version in VERSIONS:
        try:
            kv.validate(obj, version, strict=True)
        except kv.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            errors.append("%s: not valid for Kubernetes %s at %s: %s" % (name(obj), e.version, path, e.message))
        except kv.SchemaNotFoundError as e:
            errors.append("%s: %s" % (name(obj), e.message))
    return errors


def flag(args, flag_name):
    """The value of `--flag=V` or `--flag V` in a container's args, or None."""
    for i, arg in enumerate(args):
        if arg.startswith(flag_name + "="):
            return arg.split("=", 1)[1]
        if arg == flag_name and i + 1 < len(args):
            return args[i + 1]
    return None


def gateway_errors(obj):
    """A Deployment running `pegboard serve --http`: probes and shutdown timing agree with the gateway."""
    errors = []
    spec = obj["spec"]["template"]["spec"]
    for c in spec.get("containers", []):
        args = [str(a) for a in c.get("args", [])]
        if "serve" not in args or flag(args, "--http") is None:
            continue
        where = "%s container %s" % (name(obj), c["name"])
        http_port = int(flag(args, "--http").rsplit(":", 1)[-1])
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
            get = c.get(probe, {}).get("httpGet")
            if not get:
                errors.append("%s: no %s httpGet (want %s)" % (where, probe, path))
                continue
            port = get.get("port")
            port = ports.get(port) if isinstance(port, str) else port
            if get.get("path") != path or port != http_port:
                errors.append("%s: %s asks %s on port %s, want %s on the --http port %d"
                              % (where, probe, get.get("path"), port, path, http_port))
        drain = flag(args, "--drain")
        drain = DEFAULT_DRAIN_SECS if drain is None else int(drain)
        pre_stop = 0
        command = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
        if len(command) == 2 and command[0] == "sleep":
            pre_stop = int(command[1])
        elif command:
            errors.append("%s: preStop is not `sleep N`; cannot check it against the grace period" % where)
        grace = spec.get("terminationGracePeriodSeconds", 30)
        needed = pre_stop + drain + CLOSE_GRACE_SECS
        if grace < needed:
            errors.append("%s: terminationGracePeriodSeconds %d is shorter than preStop %d s + --drain %d s"
                          " + %d s for open connections = %d s: the kubelet would kill calls still draining"
                          % (where, grace, pre_stop, drain, CLOSE_GRACE_SECS, needed))
    return errors


def selector_errors(objects):
    """Each Service and PodDisruptionBudget selects the pods of a workload rendered beside it."""
    pods = [o["spec"]["template"]["metadata"].get("labels", {})
            for o in objects if o.get("kind") in ("Deployment", "StatefulSet")]
    errors = []
    for obj in objects:
        if obj.get("kind") == "Service":
            selector = obj["spec"].get("selector", {})
        elif obj.get("kind") == "PodDisruptionBudget":
            selector = obj["spec"].get("selector", {}).get("matchLabels", {})
        else:
            continue
        if not any(selector.items() <= labels.items() for labels in pods):
            errors.append("%s: its selector %s matches no pod rendered here" % (name(obj), selector))
    return errors


def check(directory):
    """The failures of one kustomization (empty: it passes) and how many objects it rendered."""
    try:
        objects = render(directory)
    except RuntimeError as e:
        return [str(e)], 0
    errors = []
    for obj in objects:
        errors += schema_errors(obj)
        if obj.get("kind") == "Secret":
            errors.append("%s: a Secret is rendered; secrets are created by the user, never committed" % name(obj))
        if obj.get("kind") == "Deployment":
            errors += gateway_errors(obj)
    errors += selector_errors(objects)
    if not objects:
        errors.append("rendered no object")
    return errors, len(objects)


passed, failed, objects = 0, 0, 0
kustomizations = sorted(p.parent for p in root.rglob("kustomization.yaml"))
for directory in kustomizations:
    errors, count = check(directory)
    objects += count
    for e in errors:
        print("check-k8s: FAIL %s: %s" % (directory, e), file=sys.stderr)
    passed, failed = (passed + 1, failed) if not errors else (passed, failed + 1)


def control(label, path, old, new, reason):
    """A copy of the manifests with the first match of the pattern `old` replaced by `new` in `path`
    must be refused, for `reason` (a piece of the error), not for some other fault."""
    global passed, failed
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "k8s"
        shutil.copytree(root, copy)
        target = copy / path
        text = target.read_text()
        if not re.search(old, text, re.M):
            print("check-k8s: FAIL control %s: %s no longer holds %r" % (label, path, old), file=sys.stderr)
            failed += 1
            return
        target.write_text(re.sub(old, new, text, count=1, flags=re.M))
        errors, _ = check(copy)
    if any(reason in e for e in errors):
        passed += 1
    else:
        print("check-k8s: FAIL control %s: the broken copy was not refused for %r (errors: %s)"
              % (label, reason, errors or "none"), file=sys.stderr)
        failed += 1


def docs_overlay(doc):
    """The overlay docs/deploy/kubernetes.md shows (its yaml blocks headed `# deploy/k8s-prod/FILE`),
    beside a copy of the manifests: it must render and pass like them."""
    global passed, failed, objects
    files = {m.group(1): m.group(0) for m in
             re.finditer(r"^# deploy/k8s-prod/(\S+)[^\n]*\n.*?(?=^```)", doc.read_text(), re.M | re.S)}
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root, pathlib.Path(tmp) / "k8s")
        overlay = pathlib.Path(tmp) / "k8s-prod"
        overlay.mkdir()
        for file, text in files.items():
            (overlay / file).write_text(text)
        errors, count = check(overlay) if "kustomization.yaml" in files else (["no kustomization.yaml block"], 0)
    objects += count
    for e in errors:
        print("check-k8s: FAIL %s's overlay: %s" % (doc, e), file=sys.stderr)
    passed, failed = (passed + 1, failed) if not errors else (passed, failed + 1)


docs_overlay(pathlib.Path("docs/deploy/kubernetes.md"))
control("unknown field", "gateway/deployment.yaml", r"automountServiceAccountToken:", "automountServiceAccountTokens:",
        "'automountServiceAccountTokens' was unexpected")
control("unknown kind", "gateway/pdb.yaml", r"^kind: PodDisruptionBudget$", "kind: PodDisruptionBudgets",
        "Couldn't find schema for kind PodDisruptionBudgets")
control("drain outlasts the grace period", "gateway/deployment.yaml", r"- --drain=\d+$", "- --drain=3600",
        "--drain 3600 s + 5 s for open connections")

print("k8s manifests: %d kustomizations and the docs' overlay, %d objects, Kubernetes %s schemas (strict), 3 controls: %d passed, %d failed"
      % (len(kustomizations), objects, " and ".join(v.rsplit(".", 1)[0] for v in VERSIONS), passed, failed))
sys.exit(1 if failed else 0)
PY
