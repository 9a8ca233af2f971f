#!/usr/bin/python3
"""Runs the Kubernetes-facing exports of `ibfabric export` through the schemas their consumers
install: the Volcano HyperNode CRD and the Kueue Topology CRD (vendored in tests/data/crds/,
see its README), validated with python3-jsonschema, plus the API server's own rules the CRDs
leave to it (metadata.name and node names are RFC 1123 subdomains, label keys and values).

Fabrics: a two-level tree, a three-level tree, superpods of 2 and 16 scalable units, hosts named
DGX0001.. (upper case), hosts named gpu_node0001.. (invalid node names; half of them mapped
with --k8s-node-name-map), switches named leaf_su1_r1.. (a superpod) and leaf_p1_01.. (a
three-level tree, where leaves are HyperNodes), switches that all report the default
description "Quantum Mellanox Technologies".

Usage: validate_exports.py --cli build/ibfabric --crds tests/data/crds
Exit status 0 when every export passes, 1 with one line per problem otherwise.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import yaml

SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
TIMEOUT = 120  # seconds for one CLI call

FABRICS = {
    "two-level": ["--preset", "two-level", "--leaves", "4", "--spines", "2", "--hosts-per-leaf", "4"],
    "three-level": ["--preset", "three-level", "--pods", "2", "--leaves-per-pod", "2",
                    "--spines-per-pod", "2", "--cores", "2", "--hosts-per-leaf", "2"],
    "superpod-2": ["--preset", "superpod", "--sus", "2"],
    "superpod-16": ["--preset", "superpod", "--sus", "16"],
    "upper-case-hosts": ["--preset", "superpod", "--sus", "1", "--host-prefix", "DGX"],
    "underscore-hosts": ["--preset", "superpod", "--sus", "1", "--host-prefix", "gpu_node"],
    "underscore-switches": ["--preset", "superpod", "--sus", "2"],
    "underscore-leaves": ["--preset", "three-level", "--pods", "2", "--leaves-per-pod", "2",
                          "--spines-per-pod", "2", "--cores", "2", "--hosts-per-leaf", "2"],
    "shared-descriptions": ["--preset", "two-level", "--leaves", "4", "--spines", "2",
                            "--hosts-per-leaf", "4"],
}


def underscore_switches(text):
    return re.sub(r"MF0;([^:\"]+):", lambda m: "MF0;" + m.group(1).replace("-", "_") + ":", text)


def shared_descriptions(text):
    return re.sub(r"\"MF0;[^\"]*\"", "\"Quantum Mellanox Technologies\"", text)


TRANSFORMS = {"underscore-switches": underscore_switches, "underscore-leaves": underscore_switches,
              "shared-descriptions": shared_descriptions}


def is_qualified_name(key):
    """A label key: [prefix/]name, prefix a DNS subdomain, name <= 63 characters."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not SUBDOMAIN.match(prefix)):
        return False
    return len(name) <= 63 and bool(LABEL_NAME.match(name))


def is_node_name(name):
    return len(name) <= 253 and bool(SUBDOMAIN.match(name))


def crd_schemas(path):
    crd = yaml.safe_load(path.read_text())
    group = crd["spec"]["group"]
    return {group + "/" + v["name"]: v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}


class Checker:
    def __init__(self, cli, crds, work):
        self.cli = cli
        self.work = work
        self.problems = []
        self.schemas = {}
        self.schemas.update(crd_schemas(crds / "topology.volcano.sh_hypernodes.yaml"))
        self.schemas.update(crd_schemas(crds / "kueue.x-k8s.io_topologies.yaml"))

    def fail(self, where, what):
        self.problems.append(f"{where}: {what}")

    def run(self, args):
        p = subprocess.run([self.cli] + args, capture_output=True, text=True, timeout=TIMEOUT)
        return p.returncode, p.stdout, p.stderr

    def validate(self, where, doc):
        schema = self.schemas.get(doc.get("apiVersion", "") if isinstance(doc, dict) else "")
        if schema is None:
            return self.fail(where, f"no schema for apiVersion {doc.get('apiVersion')!r}")
        for e in jsonschema.Draft7Validator(schema).iter_errors(doc):
            self.fail(where, f"schema: {'/'.join(str(p) for p in e.absolute_path)}: {e.message}")
        name = doc.get("metadata", {}).get("name", "")
        if len(name) > 253 or not SUBDOMAIN.match(name):
            self.fail(where, f"metadata.name {name!r} is not an RFC 1123 subdomain")
        for k, v in doc.get("metadata", {}).get("labels", {}).items():
            if not is_qualified_name(k) or not isinstance(v, str) or not LABEL_VALUE.match(v):
                self.fail(where, f"label {k}={v!r} is invalid")

    def net_file(self, fabric):
        path = self.work / f"{fabric}.net"
        code, out, err = self.run(["topo", "gen"] + FABRICS[fabric])
        if code != 0:
            raise RuntimeError(f"topo gen {fabric}: {err.strip()}")
        path.write_text(TRANSFORMS.get(fabric, lambda t: t)(out))
        return path

    def source_args(self, fabric, net):
        args = ["--from", str(net)]
        if fabric == "underscore-hosts":
            m = self.work / "k8s-node-names"
            m.write_text("".join(f"gpu_node{i:04d} gpu-node{i:04d}\n" for i in range(1, 33, 2)))
            args += ["--k8s-node-name-map", str(m)]
        return args

    def check_volcano(self, fabric, src):
        code, out, err = self.run(["export", "volcano"] + src)
        if code != 0:
            return self.fail(fabric, f"export volcano: exit {code}: {err.strip()}")
        docs = [d for d in yaml.safe_load_all(out) if d is not None]
        names = {d["metadata"]["name"] for d in docs}
        if len(names) != len(docs):
            self.fail(fabric, "volcano: duplicate HyperNode names")
        for d in docs:
            where = f"{fabric}: HyperNode {d['metadata']['name']}"
            self.validate(where, d)
            for m in d["spec"]["members"]:
                ref = m["selector"]["exactMatch"]["name"]
                if m["type"] == "Node" and not is_node_name(ref):
                    self.fail(where, f"member Node {ref!r} is not a node name")
                if m["type"] == "HyperNode" and ref not in names:
                    self.fail(where, f"member HyperNode {ref!r} is not exported")
            if "tierName" not in d["spec"]:
                self.fail(where, "no tierName")
        self.check_skips(fabric, "volcano", out, err)
        return docs

    def check_labels(self, fabric, src):
        code, out, err = self.run(["export", "k8s-labels", "--format", "json"] + src)
        if code != 0:
            return self.fail(fabric, f"export k8s-labels: exit {code}: {err.strip()}")
        doc = json.loads(out)
        for node, labels in doc["nodes"].items():
            if not is_node_name(node):
                self.fail(fabric, f"k8s-labels: node {node!r} is not a node name")
            for k, v in labels.items():
                if not is_qualified_name(k) or not LABEL_VALUE.match(v):
                    self.fail(fabric, f"k8s-labels: {node}: label {k}={v!r} is invalid")
        if doc["skipped_count"] != len(doc["skipped"]):
            self.fail(fabric, "k8s-labels: skipped_count is not the number of skipped names")
        code, out, err = self.run(["export", "k8s-labels", "--format", "kubectl"] + src)
        for line in out.splitlines():
            if line.startswith("#"):
                continue
            words = line.split()
            if words[:3] != ["kubectl", "label", "node"] or words[-1] != "--overwrite":
                self.fail(fabric, f"kubectl line: {line}")
            elif not is_node_name(words[3]):
                self.fail(fabric, f"kubectl line names {words[3]!r}")
        return doc

    def check_skips(self, fabric, what, out, err):
        """Skipped names are counted in the answer and warned about on stderr."""
        skipped = [l for l in out.splitlines() if l.startswith("# skipped: ")]
        if skipped and f"# skipped {len(skipped)} name(s)" not in out:
            self.fail(fabric, f"{what}: {len(skipped)} skips without their count")
        if len(skipped) != err.count("warning: skipped "):
            self.fail(fabric, f"{what}: {len(skipped)} skips, {err.count('warning: skipped ')} warnings")

    def check_fabric(self, fabric):
        src = self.source_args(fabric, self.net_file(fabric))
        labels = self.check_labels(fabric, src)
        hyper = self.check_volcano(fabric, src)
        if labels is None or hyper is None:
            return
        expect_skips = 16 if fabric == "underscore-hosts" else 0
        if labels["skipped_count"] != expect_skips:
            self.fail(fabric, f"k8s-labels: {labels['skipped_count']} skipped, expected {expect_skips}")
        if not labels["nodes"] or not hyper:
            self.fail(fabric, "nothing exported")
        print(f"{fabric}: {len(labels['nodes'])} nodes labelled, {labels['skipped_count']} skipped, "
              f"{len(hyper)} HyperNodes validated")

    def check_kueue(self):
        texts = {}
        for version in ["kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1alpha1"]:
            code, out, err = self.run(["export", "kueue-topology", "--api-version", version])
            if code != 0:
                self.fail("kueue", f"{version}: exit {code}: {err.strip()}")
                continue
            texts[version] = yaml.safe_load(out)
            if version != "kueue.x-k8s.io/v1alpha1":
                self.validate(f"kueue {version}", texts[version])
        code, out, _ = self.run(["export", "kueue-topology"])
        if yaml.safe_load(out).get("apiVersion") != "kueue.x-k8s.io/v1beta2":
            self.fail("kueue", "the default apiVersion is not v1beta2")
        a, b = texts.get("kueue.x-k8s.io/v1alpha1"), texts.get("kueue.x-k8s.io/v1beta1")
        if a and b and {**a, "apiVersion": ""} != {**b, "apiVersion": ""}:
            self.fail("kueue", "v1alpha1 and v1beta1 exports differ beyond apiVersion")
        for bad in [["--name", "bad_name"], ["--api-version", "foo/bar"]]:
            code, _, err = self.run(["export", "kueue-topology"] + bad)
            if code != 2 or not err.strip():
                self.fail("kueue", f"{' '.join(bad)}: exit {code}, expected 2 with the reason")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True, help="the ibfabric binary")
    ap.add_argument("--crds", required=True, type=Path, help="the vendored CRD directory")
    ap.add_argument("--only", help="one fabric of " + ", ".join(FABRICS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ibfabric-schemas-") as work:
        c = Checker(args.cli, args.crds, Path(work))
        for fabric in [args.only] if args.only else FABRICS:
            c.check_fabric(fabric)
        if not args.only:
            c.check_kueue()
    for p in c.problems:
        print(p)
    print(f"{len(c.problems)} problem(s)")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())
