"""The fault campaign's short form (`scripts/fault-campaign.sh N` runs full ones): three auto-syncing
dashboards, each through its own fault proxy, two `todosync serve` instances on one PostgreSQL;
partitions, lossy links, a paused instance and a killed client for 20 s; then, healed, everyone
converges."""
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
