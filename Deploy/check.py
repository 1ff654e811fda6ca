#!/usr/bin/env python3
"""Reads Deploy/ (docker-compose.yml, Dockerfile, k8s/*.yaml) and prints, as JSON, what the Swift test
(Tests/DeployTests) checks against the code: every `notify` command line the files run, every
NOTIFY_* environment variable they set, and every config file they ship. It also reports structural
problems it can judge alone: Deployments without probes or resources, autoscalers aimed at nothing,
references to ConfigMaps, Secrets or compose secrets that do not exist, manifests kustomize would miss.
It also reads Deploy/prometheus/rules.yaml (rule-file structure) and Deploy/grafana/notify.json and
prints every PromQL expression in them, whose metric names the test checks against the exported ones.

Usage: python3 Deploy/check.py  (exit status 0; problems are listed in the output)
"""
import glob
import json
import os
import re
import sys

import yaml

DEPLOY = os.path.dirname(os.path.abspath(__file__))


def compose_interpolate(value):
    """Docker Compose variable syntax with the defaults the file gives (the environment is not read)."""
    if not isinstance(value, str):
        return value
    value = re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}", r"\1", value)
    value = re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?\?[^}]*\}", "", value)
    return value.replace("$$", "$")


def check_compose(out):
    path = os.path.join(DEPLOY, "docker-compose.yml")
    name = "Deploy/docker-compose.yml"
    document = yaml.safe_load(open(path))
    services = document.get("services", {})
    declared_secrets = set(document.get("secrets", {}) or {})
    for service_name, service in services.items():
        where = f"{name}: services.{service_name}"
        image = service.get("image", "")
        runs_notify = image.startswith("notify") or "build" in service
        if runs_notify:
            command = service.get("command")
            if not isinstance(command, list):
                out["problems"].append(f"{where}: command must be a list (exec form)")
            else:
                out["invocations"].append({"where": where, "argv": [compose_interpolate(a) for a in command]})
        for env_name in (service.get("environment") or {}):
            out["environment"].append({"where": where, "name": env_name})
        for secret in service.get("secrets", []) or []:
            secret_name = secret if isinstance(secret, str) else secret.get("source")
            if secret_name not in declared_secrets:
                out["problems"].append(f"{where}: secret {secret_name} is not declared")
        for dependency, condition in (service.get("depends_on") or {}).items():
            if dependency not in services:
                out["problems"].append(f"{where}: depends on unknown service {dependency}")
    for required in ("kafka", "topics"):
        if required not in services:
            out["problems"].append(f"{name}: no {required} service")
    kafka_env = services.get("kafka", {}).get("environment", {})
    if "controller" not in str(kafka_env.get("KAFKA_PROCESS_ROLES", "")):
        out["problems"].append(f"{name}: kafka is not in KRaft mode (KAFKA_PROCESS_ROLES without controller)")
    pipelines = [s for s in services.values() if (s.get("command") or [None])[0] == "pipeline"]
    if len(pipelines) < 2:
        out["problems"].append(f"{name}: expected two pipeline instances, found {len(pipelines)}")


def check_dockerfile(out):
    name = "Deploy/Dockerfile"
    text = open(os.path.join(DEPLOY, "Dockerfile")).read()
    stages = re.findall(r"^FROM\s+(\S+)", text, re.M)
    if len(stages) < 2:
        out["problems"].append(f"{name}: not multi-stage")
    if "librdkafka1" not in text:
        out["problems"].append(f"{name}: runtime image lacks librdkafka1")
    for env_block in re.findall(r"^ENV\s+((?:.*\\\n)*.*)$", text, re.M):
        for env_name in re.findall(r"([A-Z_][A-Z0-9_]*)=", env_block):
            out["environment"].append({"where": f"{name}: ENV", "name": env_name})


def check_kubernetes(out):
    files = sorted(glob.glob(os.path.join(DEPLOY, "k8s", "*.yaml")))
    objects = []
    for path in files:
        name = "Deploy/k8s/" + os.path.basename(path)
        for document in yaml.safe_load_all(open(path)):
            if document:
                objects.append((name, document))
    by_kind = {}
    for name, document in objects:
        by_kind.setdefault(document["kind"], {})[document.get("metadata", {}).get("name", "")] = (name, document)

    kustomization = by_kind.get("Kustomization", {})
    listed = set()
    for _, (_, document) in kustomization.items():
        listed.update(document.get("resources", []))
    for path in files:
        base = os.path.basename(path)
        if base != "kustomization.yaml" and base not in listed:
            out["problems"].append(f"Deploy/k8s/kustomization.yaml: does not list {base}")

    config_maps = by_kind.get("ConfigMap", {})
    secrets = by_kind.get("Secret", {})
    for map_name, (name, document) in config_maps.items():
        for key, value in (document.get("data") or {}).items():
            if key.endswith(".json"):
                out["configFiles"].append({"where": f"{name}: ConfigMap {map_name} key {key}", "text": value})

    def pod_spec(document):
        if document["kind"] in ("Deployment", "Job"):
            return document["spec"]["template"]["spec"]
        return None

    for kind in ("Deployment", "Job"):
        for object_name, (name, document) in by_kind.get(kind, {}).items():
            spec = pod_spec(document)
            where = f"{name}: {kind} {object_name}"
            for volume in spec.get("volumes", []) or []:
                if "configMap" in volume and volume["configMap"]["name"] not in config_maps:
                    out["problems"].append(f"{where}: volume {volume['name']} uses unknown ConfigMap")
                if "secret" in volume and volume["secret"]["secretName"] not in secrets:
                    out["problems"].append(f"{where}: volume {volume['name']} uses unknown Secret")
            for container in spec["containers"]:
                cwhere = f"{where} container {container['name']}"
                argv = (container.get("command") or [])[1:] if container.get("command") else container.get("args", [])
                out["invocations"].append({"where": cwhere, "argv": argv})
                if not container.get("resources", {}).get("requests"):
                    out["problems"].append(f"{cwhere}: no resource requests")
                for env in container.get("env", []) or []:
                    out["environment"].append({"where": cwhere, "name": env["name"]})
                    source = env.get("valueFrom", {})
                    if "configMapKeyRef" in source:
                        reference = source["configMapKeyRef"]
                        data = config_maps.get(reference["name"], (None, {}))[1].get("data", {})
                        if reference["key"] not in data:
                            out["problems"].append(f"{cwhere}: env {env['name']} needs ConfigMap {reference['name']} key {reference['key']}")
                    if "secretKeyRef" in source:
                        reference = source["secretKeyRef"]
                        data = secrets.get(reference["name"], (None, {}))[1].get("stringData", {})
                        if reference["key"] not in data:
                            out["problems"].append(f"{cwhere}: env {env['name']} needs Secret {reference['name']} key {reference['key']}")
                if kind == "Deployment":
                    probes = {
                        "livenessProbe": "/healthz",
                        "readinessProbe": "/readyz",
                    }
                    for probe, path in probes.items():
                        got = container.get(probe, {}).get("httpGet", {}).get("path")
                        if got != path:
                            out["problems"].append(f"{cwhere}: {probe} should GET {path}, has {got}")

    deployments = by_kind.get("Deployment", {})
    for object_name, (name, document) in by_kind.get("ScaledObject", {}).items():
        target = document["spec"]["scaleTargetRef"]["name"]
        if target not in deployments:
            out["problems"].append(f"{name}: ScaledObject {object_name} targets unknown Deployment {target}")
        for trigger in document["spec"].get("triggers", []):
            if trigger.get("type") != "kafka" or "lagThreshold" not in trigger.get("metadata", {}):
                out["problems"].append(f"{name}: ScaledObject {object_name} has a trigger that is not Kafka lag")
    for object_name in deployments:
        scaled = any(d["spec"]["scaleTargetRef"]["name"] == object_name for _, d in by_kind.get("ScaledObject", {}).values())
        out["deployments"].append({"name": object_name, "autoscaled": scaled})


DURATION = re.compile(r"^([0-9]+(ms|s|m|h|d|w|y))+$")


def check_prometheus_rules(out):
    """Prometheus rule-file structure (groups of alerting or recording rules); collects each expression."""
    name = "Deploy/prometheus/rules.yaml"
    document = yaml.safe_load(open(os.path.join(DEPLOY, "prometheus", "rules.yaml")))
    groups = document.get("groups") if isinstance(document, dict) else None
    if not isinstance(groups, list) or not groups:
        out["problems"].append(f"{name}: no groups")
        return
    alerts = set()
    for group in groups:
        if not isinstance(group.get("name"), str) or not isinstance(group.get("rules"), list):
            out["problems"].append(f"{name}: a group needs a name and a list of rules")
            continue
        for rule in group["rules"]:
            where = f"{name}: {group['name']}/{rule.get('alert') or rule.get('record')}"
            unknown = set(rule) - {"alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"}
            if unknown:
                out["problems"].append(f"{where}: unknown keys {sorted(unknown)}")
            if ("alert" in rule) == ("record" in rule):
                out["problems"].append(f"{where}: a rule is an alert or a record, not both or neither")
            if not isinstance(rule.get("expr"), str) or not rule["expr"].strip():
                out["problems"].append(f"{where}: no expr")
                continue
            if "for" in rule and not DURATION.match(str(rule["for"])):
                out["problems"].append(f"{where}: for {rule['for']!r} is not a duration")
            if "alert" in rule:
                if rule["alert"] in alerts:
                    out["problems"].append(f"{where}: alert named twice")
                alerts.add(rule["alert"])
                if (rule.get("labels") or {}).get("severity") not in ("warning", "critical"):
                    out["problems"].append(f"{where}: labels.severity must be warning or critical")
                if not (rule.get("annotations") or {}).get("summary"):
                    out["problems"].append(f"{where}: no annotations.summary")
            out["expressions"].append({"where": where, "expr": rule["expr"]})
    out["alerts"] = sorted(alerts)


def check_grafana_dashboard(out):
    """The dashboard is JSON with panels; collects each panel target's expression."""
    name = "Deploy/grafana/notify.json"
    dashboard = json.load(open(os.path.join(DEPLOY, "grafana", "notify.json")))
    panels = dashboard.get("panels") or []
    if not panels:
        out["problems"].append(f"{name}: no panels")
    for panel in panels:
        targets = panel.get("targets") or []
        if not targets:
            out["problems"].append(f"{name}: panel {panel.get('title')!r} has no targets")
        for target in targets:
            out["expressions"].append({"where": f"{name}: {panel.get('title')}", "expr": target.get("expr", "")})


def main():
    out = {"invocations": [], "environment": [], "configFiles": [], "deployments": [], "problems": [],
           "expressions": [], "alerts": []}
    check_compose(out)
    check_dockerfile(out)
    check_kubernetes(out)
    check_prometheus_rules(out)
    check_grafana_dashboard(out)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
