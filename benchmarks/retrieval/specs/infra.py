"""Infra: Terraform on Hetzner, a k3s cluster, GitHub Actions CI, backups and monitoring."""

from __future__ import annotations

from datetime import timedelta

import tool_output as noise
from ._base import NOW, A, C, Spec, U, rng_for

CWD = "/home/ana/src/infra"
CWD_ES = "/home/lucia/src/infra"

PODS = ["billing-api", "billing-api", "billing-worker", "shop-web", "shop-web", "shop-worker", "typesense", "redis",
        "traefik", "coredns", "metrics-server", "cert-manager", "cert-manager-webhook", "prometheus-server",
        "grafana", "loki", "promtail", "promtail"]


def specs() -> list[Spec]:
    out = []

    # -- decision chain: CI runners (GitHub-hosted -> self-hosted Hetzner -> GitHub larger runners) ----
    r = rng_for("infra-ci-1")
    out.append(Spec("infra-ci-1", "claude", CWD, 530, [
        U("Set up CI for the shop and billing-api repos. Nothing fancy: lint, tests with a Postgres service, build "
          "the docker image on main."),
        C("ls .github/workflows/ 2>/dev/null || echo none", "none"),
        A("I'll add a reusable workflow in infra (`.github/workflows/python-ci.yml`) that both repos call, running on "
          "GitHub-hosted `ubuntu-latest` runners with a postgres:16 service container and uv cache."),
        C("gh workflow run python-ci.yml --repo acme/billing-api && gh run watch", "✓ lint in 41s\n✓ test in 3m12s\n"
          "✓ build-image in 2m05s\n\n✓ Run python-ci (1234567) completed with 'success'"),
        A("CI runs on GitHub-hosted ubuntu-latest runners via the reusable workflow .github/workflows/python-ci.yml. "
          "Typical run: 6-7 minutes. Free minutes cover us for now (about 1,400 of 3,000 per month)."),
    ], notes="CI chain 1/3: GitHub-hosted runners"))

    r = rng_for("infra-ci-2")
    out.append(Spec("infra-ci-2", "codex", CWD, 310, [
        U("We blew through the GitHub Actions minutes again, 4,100 of 3,000, and the extra is costing ~$60/month. "
          "We have a spare Hetzner AX41 box. Move CI to self-hosted runners on it."),
        C("ssh ax41 'nproc; free -g; df -h /'", "12\n              total        used        free\nMem:             62"
          "           3          57\nFilesystem      Size  Used Avail Use% Mounted on\n/dev/md2        476G   21G  431G   5% /"),
        C("ansible-playbook -i inventory/hetzner.ini playbooks/gh-runner.yml --limit ax41",
          "PLAY [github runners] ***\n\nTASK [Gathering Facts] ***\nok: [ax41]\n\nTASK [gh-runner : download actions-runner 2.317.0] ***\n"
          "changed: [ax41]\n\nTASK [gh-runner : register 4 runners] ***\nchanged: [ax41] => (item=runner-1)\nchanged: [ax41] => (item=runner-2)\n"
          "changed: [ax41] => (item=runner-3)\nchanged: [ax41] => (item=runner-4)\n\nPLAY RECAP ***\nax41  : ok=9 changed=5 unreachable=0 failed=0"),
        A("Four runners registered with label `self-hosted,hetzner` as systemd services. Switching `runs-on` in "
          "python-ci.yml."),
        C("gh run watch", "✓ lint in 18s\n✓ test in 1m20s\n✓ build-image in 55s"),
        A("CI now runs on 4 self-hosted runners on the Hetzner AX41 (`runs-on: [self-hosted, hetzner]`), "
          "provisioned by playbooks/gh-runner.yml. Runs take ~2.5 minutes instead of 6-7, and no more paid minutes."),
    ], notes="CI chain 2/3: self-hosted runners on Hetzner AX41"))

    r = rng_for("infra-ci-3")
    out.append(Spec("infra-ci-3", "claude", CWD, 25, [
        U("The AX41 runner box filled its disk again and CI was red for half a day. Third time this quarter, plus "
          "the runner update dance. I'm done babysitting it. What would GitHub's larger runners cost us?"),
        C("gh api /orgs/acme/settings/billing/actions", '{"total_minutes_used":3890,"total_paid_minutes_used":890,'
          '"included_minutes":3000,"minutes_used_breakdown":{"UBUNTU":3890}}'),
        A("At ~3,900 minutes/month on 4-core larger runners ($0.016/min) we'd pay about $62/month, roughly what the "
          "AX41 costs (€44 plus our time). Larger runners are ephemeral, so no disk cleanup, no runner updates."),
        U("do it. move everything to the 4-core hosted runners and decommission the box"),
        C("sed -i 's/runs-on: \\[self-hosted, hetzner\\]/runs-on: ubuntu-24.04-4core/' .github/workflows/*.yml && git diff --stat",
          noise.git_diff_stat(r, [".github/workflows/python-ci.yml", ".github/workflows/docker.yml", ".github/workflows/nightly.yml"])),
        C("ansible-playbook -i inventory/hetzner.ini playbooks/gh-runner.yml --tags deregister --limit ax41",
          "TASK [gh-runner : deregister runners] ***\nchanged: [ax41] => (item=runner-1)\nchanged: [ax41] => (item=runner-2)\n"
          "changed: [ax41] => (item=runner-3)\nchanged: [ax41] => (item=runner-4)"),
        A("CI is back on GitHub-hosted runners, now the larger `ubuntu-24.04-4core` ones; the self-hosted runners on "
          "the AX41 are deregistered and the server is cancelled at the end of the month. Expected cost about "
          "$62/month, no maintenance."),
    ], notes="CI chain 3/3 (current): GitHub larger runners ubuntu-24.04-4core"))

    # -- decision chain: TLS (certbot cron -> cert-manager DNS-01) ------------------------------------
    r = rng_for("infra-tls-1")
    out.append(Spec("infra-tls-1", "codex", CWD, 450, [
        U("The shop certificate expired this morning. How was renewal supposed to work?"),
        C("sudo certbot certificates", "Found the following certs:\n  Certificate Name: shop.example.es\n"
          "    Domains: shop.example.es www.shop.example.es\n    Expiry Date: 2025-08-22 06:11:02+00:00 (INVALID: EXPIRED)\n"
          "    Certificate Path: /etc/letsencrypt/live/shop.example.es/fullchain.pem"),
        C("systemctl list-timers | grep certbot", ""),
        A("The certbot snap timer was removed when the server was rebuilt. I'll renew now and add a cron entry "
          "with a deploy hook that reloads nginx."),
        C("sudo certbot renew --deploy-hook 'systemctl reload nginx'", "Congratulations, all renewals succeeded:\n"
          "  /etc/letsencrypt/live/shop.example.es/fullchain.pem (success)"),
        A("Renewed. Certificates are handled by certbot on the VM with a cron entry in /etc/cron.d/certbot "
          "(`17 3 * * * root certbot renew -q --deploy-hook 'systemctl reload nginx'`) and an expiry check in uptime-kuma."),
    ], notes="TLS chain 1/2: certbot cron"))

    r = rng_for("infra-tls-2")
    out.append(Spec("infra-tls-2", "claude", CWD, 150, [
        U("Now that everything runs on k3s, certbot on the old VM doesn't make sense. Set up TLS inside the cluster. "
          "Our DNS is on Cloudflare."),
        C("helm repo add jetstack https://charts.jetstack.io && helm install cert-manager jetstack/cert-manager -n cert-manager --create-namespace --set crds.enabled=true",
          "NAME: cert-manager\nLAST DEPLOYED: Mon Jun 15 10:02:11 2026\nNAMESPACE: cert-manager\nSTATUS: deployed\nREVISION: 1"),
        A("Using a ClusterIssuer with the DNS-01 solver through the Cloudflare API token (stored as a Secret), which "
          "also gives us wildcard certificates."),
        C("kubectl apply -f k8s/cert-manager/clusterissuer-letsencrypt.yaml && kubectl get certificate -A",
          "clusterissuer.cert-manager.io/letsencrypt-dns created\nNAMESPACE   NAME           READY   SECRET             AGE\n"
          "shop        shop-tls       True    shop-tls           2m\nbilling     billing-tls    True    billing-tls        2m"),
        C("ssh old-vm 'sudo rm /etc/cron.d/certbot && sudo apt-get purge -y certbot'", "Removing certbot (2.9.0-1) ..."),
        A("TLS now comes from cert-manager on k3s with a Let's Encrypt ClusterIssuer `letsencrypt-dns` using DNS-01 on "
          "Cloudflare; wildcard *.example.es. The certbot cron on the old VM is removed."),
    ], notes="TLS chain 2/2 (current): cert-manager DNS-01"))

    # -- errors -------------------------------------------------------------------------------------
    r = rng_for("infra-pg-disk")
    out.append(Spec("infra-pg-disk", "claude", CWD, 230, [
        U("billing-api returns 500s, Postgres logs are full of errors about extending files."),
        C("kubectl -n data logs postgres-0 --tail 20", "2026-04-01 07:12:40.113 UTC [2271] ERROR:  could not extend file "
          "\"base/16384/2619\": No space left on device\n2026-04-01 07:12:40.113 UTC [2271] HINT:  Check free disk space.\n"
          "2026-04-01 07:12:41.902 UTC [88] PANIC:  could not write to file \"pg_wal/xlogtemp.88\": No space left on device"),
        C("kubectl -n data exec postgres-0 -- df -h /var/lib/postgresql/data", "Filesystem      Size  Used Avail Use% Mounted on\n"
          "/dev/sdb         20G   20G     0 100% /var/lib/postgresql/data"),
        A("The Hetzner volume backing the Postgres PVC is full, mostly WAL kept for a replication slot of a replica "
          "that was deleted last month. Drop the stale slot, then grow the volume."),
        C("kubectl -n data exec postgres-0 -- psql -c \"select slot_name, active, pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)) from pg_replication_slots\"",
          " slot_name  | active | pg_size_pretty\n------------+--------+----------------\n replica_1  | f      | 11 GB\n(1 row)"),
        C("kubectl -n data exec postgres-0 -- psql -c \"select pg_drop_replication_slot('replica_1')\"", " pg_drop_replication_slot\n--------------------------\n \n(1 row)"),
        C("hcloud volume resize pvc-7f3a2c --size 40", "Resizing volume 10432115 to 40 GB... done"),
        A("Fixed 'No space left on device' on Postgres: dropped the inactive replication slot replica_1 (11 GB of "
          "retained WAL) and resized the Hetzner volume from 20 to 40 GB. Added an alert on "
          "pg_replication_slots inactive for more than 1h."),
    ], notes="error: could not extend file ... No space left on device"))

    r = rng_for("infra-tf-lock")
    out.append(Spec("infra-tf-lock", "codex", CWD, 170, [
        U("terraform apply hangs then errors about the state lock. Nobody else is running it."),
        C("terraform apply", "Acquiring state lock. This may take a few moments...\n\n"
          "Error: Error acquiring the state lock\n\nError message: ConditionalCheckFailedException: The conditional request failed\n"
          "Lock Info:\n  ID:        6f1c0b7e-2d7a-4c1e-9a55-0e3b8d2f41aa\n  Path:      acme-tfstate/infra/terraform.tfstate\n"
          "  Operation: OperationTypeApply\n  Who:       runner@ax41\n  Version:   1.8.5\n  Created:   2026-05-28 02:14:09 UTC\n\n"
          "Terraform acquires a state lock to protect the state from being written\nby multiple users at the same time.",
          failed=True),
        A("The lock was taken by the nightly drift-check job on the CI runner, which was killed mid-apply when the "
          "runner rebooted. Safe to release it since that run is gone."),
        C("terraform force-unlock -force 6f1c0b7e-2d7a-4c1e-9a55-0e3b8d2f41aa", "Terraform state has been successfully unlocked!"),
        C("terraform plan", noise.terraform_plan(r, [("hcloud_server.web1", "update"), ("hcloud_firewall.web", "update"),
                                                     ("hcloud_volume.pg", "update")])),
        A("Released the stale DynamoDB lock with `terraform force-unlock` (lock id 6f1c0b7e...). The drift-check job "
          "now runs `terraform plan -lock-timeout=5m` and never apply."),
    ], notes="error: Error acquiring the state lock; command terraform force-unlock"))

    r = rng_for("infra-coredns")
    out.append(Spec("infra-coredns", "claude", CWD, 110, [
        U("Payments fail intermittently from the cluster:\n"
          "Post \"https://api.stripe.com/v1/payment_intents\": dial tcp: lookup api.stripe.com on 10.43.0.10:53: server misbehaving"),
        C("kubectl -n kube-system get configmap coredns -o yaml | sed -n '/Corefile/,/^kind/p'",
          "  Corefile: |\n    .:53 {\n        errors\n        health\n        kubernetes cluster.local in-addr.arpa ip6.arpa {\n"
          "          pods insecure\n          fallthrough in-addr.arpa ip6.arpa\n        }\n        forward . /etc/resolv.conf\n"
          "        cache 30\n        loop\n        reload\n    }"),
        C("kubectl -n kube-system logs -l k8s-app=kube-dns --tail 10", "[ERROR] plugin/errors: 2 api.stripe.com. A: "
          "read udp 10.42.0.5:41234->185.12.64.1:53: i/o timeout\n" * 4),
        A("CoreDNS forwards to the node's resolv.conf, which points at Hetzner's resolvers, and those time out "
          "under load. Forward to 1.1.1.1 and 9.9.9.9 instead and raise the cache."),
        C("kubectl -n kube-system apply -f k8s/coredns-custom.yaml && kubectl -n kube-system rollout restart deploy coredns",
          "configmap/coredns-custom configured\ndeployment.apps/coredns restarted"),
        A("Fixed 'server misbehaving' DNS lookups: CoreDNS now forwards to 1.1.1.1 and 9.9.9.9 (coredns-custom "
          "ConfigMap) with cache 300. No more lookup errors in 24 h of logs."),
    ], notes="error: lookup ... server misbehaving; CoreDNS forward"))

    # -- Spanish --------------------------------------------------------------------------------------
    r = rng_for("infra-backups-es")
    out.append(Spec("infra-backups-es", "claude", CWD_ES, 65, [
        U("Necesitamos copias de seguridad fuera de Hetzner para la base de datos y los ficheros de media de la "
          "tienda. Propón algo sencillo y barato."),
        A("Propongo restic a un bucket de Backblaze B2: cifrado en cliente, deduplicación y snapshots incrementales. "
          "Un CronJob en k3s hace pg_dump y luego `restic backup`."),
        C("restic -r b2:acme-backups:/k3s init", "created restic repository 4f2a9c1e0b at b2:acme-backups:/k3s\n\n"
          "Please note that knowledge of your password is required to access\nthe repository. Losing your password means "
          "that your data is\nirrecoverably lost."),
        C("kubectl -n backup create job --from=cronjob/restic-backup prueba-1 && kubectl -n backup logs -f job/prueba-1",
          "pg_dump: dumping contents of table \"public.invoices\"\n...\nFiles:        3912 new,     0 changed,     0 unmodified\n"
          "Added to the repository: 2.106 GiB (1.871 GiB stored)\nprocessed 3913 files, 2.311 GiB in 4:12\nsnapshot 9c1d7e2a saved"),
        C("restic -r b2:acme-backups:/k3s forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --prune --dry-run",
          "Applying Policy: keep 7 daily, 4 weekly, 12 monthly snapshots\nkeep 1 snapshots:\nID        Time                 Host\n"
          "9c1d7e2a  2026-09-11 03:00:12  restic-backup"),
        A("Hecho. Copias diarias a las 03:00 con restic a Backblaze B2 (CronJob `restic-backup` en el namespace backup): "
          "pg_dump de billing y shop más /media. Retención: 7 diarias, 4 semanales y 12 mensuales. Coste estimado: "
          "unos 0,60 €/mes. Probada la restauración en un Postgres temporal."),
    ], lang="es", notes="Spanish: restic backups to Backblaze B2, retention 7/4/12"))

    r = rng_for("infra-crashloop-es")
    out.append(Spec("infra-crashloop-es", "codex", CWD_ES, 12, [
        U("Salta la alerta KubePodCrashLooping para billing-api desde el despliegue de anoche. ¿Qué pasa?"),
        C("kubectl -n billing get pods", noise.kubectl_pods(r, ["billing-api", "billing-api", "billing-worker"],
                                                             bad={"billing-api": "CrashLoopBackOff"})),
        C("kubectl -n billing describe pod -l app=billing-api | tail -n 12", noise.kubectl_events(r, [
            ("Warning", "Unhealthy", "Liveness probe failed: Get \"http://10.42.1.17:8000/healthz\": context deadline exceeded"),
            ("Normal", "Killing", "Container api failed liveness probe, will be restarted"),
            ("Warning", "BackOff", "Back-off restarting failed container api in pod billing-api")])),
        A("La sonda de liveness empieza a los 5 segundos, pero desde el despliegue de anoche el arranque carga las "
          "tarifas de IVA desde la base de datos y tarda unos 20 segundos: Kubernetes mata el contenedor antes de "
          "que arranque. Añado una startupProbe y subo initialDelaySeconds a 30."),
        C("kubectl -n billing apply -f k8s/billing/deployment.yaml && kubectl -n billing rollout status deploy/billing-api",
          "deployment.apps/billing-api configured\nWaiting for deployment \"billing-api\" rollout to finish: 1 of 2 updated replicas are available...\n"
          "deployment \"billing-api\" successfully rolled out"),
        A("Resuelto: billing-api tenía la liveness probe demasiado agresiva para el nuevo arranque (~20 s). Ahora hay "
          "startupProbe (failureThreshold 12, periodSeconds 5) e initialDelaySeconds: 30. Los pods llevan 1 h sin reinicios."),
    ], lang="es", notes="Spanish: CrashLoopBackOff, liveness probe"))

    out.append(_long_k3s_upgrade())
    return out


def _long_k3s_upgrade() -> Spec:
    r = rng_for("infra-k3s-upgrade-long")
    start = NOW - timedelta(days=45)
    manifests = [f"k8s/{app}/{kind}.yaml" for app in ("shop", "billing", "grafana", "typesense", "loki")
                 for kind in ("ingressroute", "middleware", "deployment")]
    turns = [
        U("Upgrade the k3s cluster from v1.28 to v1.30, one minor at a time, without downtime for shop and billing. "
          "3 nodes: cp1, w1, w2."),
        C("kubectl get nodes -o wide", "NAME   STATUS   ROLES                  AGE    VERSION        INTERNAL-IP   OS-IMAGE\n"
          "cp1    Ready    control-plane,master   401d   v1.28.11+k3s2  10.0.1.2      Ubuntu 22.04.4 LTS\n"
          "w1     Ready    <none>                 401d   v1.28.11+k3s2  10.0.1.3      Ubuntu 22.04.4 LTS\n"
          "w2     Ready    <none>                 288d   v1.28.11+k3s2  10.0.1.4      Ubuntu 22.04.4 LTS"),
        C("kubectl get pods -A", noise.kubectl_pods(r, [f"{ns}/{p}" for ns, p in zip(
            ["shop", "shop", "shop", "billing", "billing", "billing", "search", "shop", "kube-system", "kube-system",
             "kube-system", "cert-manager", "cert-manager", "monitoring", "monitoring", "monitoring", "monitoring", "monitoring"],
            PODS)], namespace_col=True)),
    ]
    for version in ("v1.29.6+k3s2", "v1.30.2+k3s1"):
        for node in ("cp1", "w1", "w2"):
            turns.append(C(f"kubectl drain {node} --ignore-daemonsets --delete-emptydir-data",
                           f"node/{node} cordoned\n" + "\n".join(
                               f"evicting pod {p}-{noise.sha(r, 9)}-{noise.sha(r, 5)}" for p in r.sample(PODS, 9)) +
                           f"\nnode/{node} drained"))
            turns.append(C(f"ssh {node} 'curl -sfL https://get.k3s.io | INSTALL_K3S_VERSION={version} sh -'",
                           "\n".join(f"[INFO]  {m}" for m in [
                               f"Using {version} as release", f"Downloading hash https://github.com/k3s-io/k3s/releases/download/{version}/sha256sum-amd64.txt",
                               f"Downloading binary https://github.com/k3s-io/k3s/releases/download/{version}/k3s",
                               "Verifying binary download", "Installing k3s to /usr/local/bin/k3s", "Skipping installation of SELinux RPM",
                               "systemd: Starting k3s-agent" if node != "cp1" else "systemd: Starting k3s"])))
            turns.append(C(f"kubectl uncordon {node} && kubectl get pods -A", noise.kubectl_pods(r, PODS)))
            turns.append(C("kubectl -n shop logs deploy/shop-web --since=10m | tail -n 40", noise.access_log(
                r, ["/", "/c/socks/", "/p/merino-socks-grey/", "/cart/", "/healthz", "/static/css/app.css"], 40, start)))
            turns.append(C("kubectl get events -A --sort-by=.lastTimestamp | tail -n 25", noise.kubectl_events(r, [
                (r.choice(["Normal", "Normal", "Warning"]), r.choice(["Scheduled", "Pulled", "Created", "Started", "BackOff", "Unhealthy"]),
                 r.choice(["Successfully assigned pod to w1", "Container image already present on machine",
                           "Readiness probe failed: HTTP probe failed with statuscode: 503", "Started container app"]))
                for _ in range(25)])))
        turns.append(A(f"All three nodes are on {version}. Pods rescheduled cleanly; some readiness failures during "
                       "rescheduling, all recovered."))
    turns += [
        C("kubectl -n shop get ingressroute", "error: the server doesn't have a resource type \"ingressroute\"", failed=True),
        C("kubectl get crd | grep traefik", "ingressroutes.traefik.io                  2026-10-01T09:14:22Z\n"
          "middlewares.traefik.io                    2026-10-01T09:14:22Z\ntlsoptions.traefik.io                     2026-10-01T09:14:22Z"),
        A("The bundled Traefik went from v2 to v3 with k3s 1.30 and the old `traefik.containo.us/v1alpha1` CRDs are "
          "gone; our manifests still use that apiVersion."),
        C("grep -rl 'traefik.containo.us' k8s/ | xargs sed -i 's#traefik.containo.us/v1alpha1#traefik.io/v1alpha1#'; git diff --stat",
          noise.git_diff_stat(r, manifests[:14])),
        C("kubectl apply -R -f k8s/", "\n".join(f"ingressroute.traefik.io/{m.split('/')[1]} created" for m in manifests[:14])),
        C("curl -sI https://billing.example.es/healthz", "HTTP/2 404\ncontent-type: text/plain; charset=utf-8\ncontent-length: 19"),
        C("kubectl -n kube-system logs deploy/traefik --tail 5", "level=error msg=\"middleware \\\"shop-ratelimit@kubernetescrd\\\" "
          "does not exist\" entryPointName=websecure routerName=billing-billing-api@kubernetescrd\n"
          "level=error msg=\"IngressRoute billing/billing-api references middleware in namespace shop: cross-namespace "
          "references are not allowed\""),
        C("kubectl apply -f k8s/kube-system/traefik-helmchartconfig.yaml && kubectl -n kube-system rollout status deploy/traefik",
          "helmchartconfig.helm.cattle.io/traefik configured\ndeployment \"traefik\" successfully rolled out"),
        C("curl -sI https://billing.example.es/healthz", "HTTP/2 200\ncontent-type: application/json"),
        A("Cluster upgraded to k3s v1.30.2+k3s1 on all nodes. Two things broke with Traefik v3: the CRDs moved from "
          "traefik.containo.us to traefik.io/v1alpha1 (14 manifests updated), and the billing IngressRoute uses a "
          "middleware from the shop namespace, which Traefik v3 refuses by default; the HelmChartConfig for traefik now "
          "sets `providers.kubernetesCRD.allowCrossNamespace=true`. billing and shop answer 200 again."),
    ]
    return Spec("infra-k3s-upgrade-long", "codex", CWD, 45, turns,
                notes="LONG: k3s upgrade; Traefik v3 CRDs and allowCrossNamespace at the end",
                end_facts=["allowCrossNamespace", "traefik.containo.us"])
