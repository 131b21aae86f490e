"""The fault campaign's short form (`scripts/fault-campaign.sh N` runs full ones): three auto-syncing
dashboards, each through its own fault proxy, two `todosync serve` instances on one PostgreSQL;
partitions, lossy links, a paused instance and a killed client for 20 s; then, healed, everyone
converges. And the same with power cuts: every data folder on a power-cut filesystem (the service on
SQLite), the service's power and a client's cut at least once each."""
import os
import random

import pytest

import fault_campaign


@pytest.mark.skipif(not os.environ.get("TODOSYNC_TEST_POSTGRES_URL"),
                    reason="needs the test PostgreSQL cluster (make test starts one)")
def test_a_short_campaign_converges_after_healing():
    seed = int(os.environ.get("TODOSYNC_CAMPAIGN_SEED") or random.randrange(1, 1_000_000))
    report = fault_campaign.run(seed, duration=20, heal_window=60,
                                cluster_url=os.environ["TODOSYNC_TEST_POSTGRES_URL"])
    assert report["outcome"] == "converged", (
        "seed %d (replay: TODOSYNC_CAMPAIGN_SEED=%d): %s; faults %s; logs in %s"
        % (seed, seed, report.get("why"), report["faults"], report["folder"]))
    assert report["edits"] > 20 and report["faults"]


def test_a_short_campaign_with_power_cuts_converges_after_healing():
    seed = int(os.environ.get("TODOSYNC_CAMPAIGN_SEED") or random.randrange(1, 1_000_000))
    report = fault_campaign.run(seed, duration=20, heal_window=60, cluster_url=None, power_cuts=True)
    assert report["outcome"] == "converged", (
        "seed %d (replay: TODOSYNC_CAMPAIGN_SEED=%d): %s; faults %s; logs in %s"
        % (seed, seed, report.get("why"), report["faults"], report["folder"]))
    faults = " ".join(report["faults"])
    assert "power cut of the service" in faults and "power cut client" in faults
