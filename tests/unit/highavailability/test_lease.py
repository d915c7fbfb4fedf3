"""The pure leader election (acquire, renew, expire, fence) and the lease, job graph and checkpoint stores on a local
directory."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from strom.runtime.highavailability.lease import (
    GrantLeadership,
    LeaderElection,
    LeaderLease,
    LeaderState,
    RevokeLeadership,
    WriteLease,
    lease_accepts,
)
from strom.runtime.highavailability.lease_store import FileLeaseStore
from strom.runtime.highavailability.stores import (
    CheckpointPointer,
    CompletedCheckpointStore,
    JobGraphStore,
    LeadershipLostError,
)

JOB = "0123456789abcdef0123456789abcdef"


def _election(name: str) -> LeaderElection:
    counter = itertools.count(1)
    return LeaderElection(contender_id=name, lease_duration_ms=1000, new_session=lambda: f"{name}-s{next(counter)}")


def _acquire(e: LeaderElection, latest: LeaderLease | None, now: int) -> LeaderLease:
    [write] = e.on_observed(latest, now)
    assert isinstance(write, WriteLease)
    e.validate()
    assert e.on_write_result(True, now) == [GrantLeadership(session_id=e.session_id)]
    e.validate()
    return write.lease


@pytest.mark.timeout(10)
def test_acquire_renew_and_confirm() -> None:
    a = _election("a")
    lease = _acquire(a, None, 0)
    assert lease.generation == 1 and lease.expires_at_ms == 1000 and a.is_leader(999) and not a.is_leader(1000)
    a.confirm_leadership("h:1", "http://h:2")
    [renew] = a.on_observed(lease, 500)
    assert isinstance(renew, WriteLease)
    assert renew.lease.generation == 2 and renew.lease.session_id == lease.session_id
    assert renew.lease.rpc_address == "h:1" and renew.lease.expires_at_ms == 1500
    assert a.on_write_result(True, 500) == []
    assert a.valid_until_ms == 1500
    a.validate()


@pytest.mark.timeout(10)
def test_a_standby_waits_for_expiry_then_takes_over_with_a_new_session() -> None:
    a, b = _election("a"), _election("b")
    lease = _acquire(a, None, 0)
    assert b.on_observed(lease, 999) == [] and b.state is LeaderState.STANDBY
    taken = _acquire(b, lease, 1000)
    assert taken.generation == 2 and taken.session_id != lease.session_id
    # the old leader wakes up (paused past its lease): expired on its own clock, it steps down without a write
    [revoke] = a.on_observed(taken, 5000)
    assert isinstance(revoke, RevokeLeadership) and revoke.session_id == lease.session_id
    assert a.state is LeaderState.STANDBY and not a.is_leader(5000)
    a.validate()


@pytest.mark.timeout(10)
def test_a_leader_whose_lease_another_holds_or_whose_renewal_lost_steps_down() -> None:
    a, b = _election("a"), _election("b")
    lease = _acquire(a, None, 0)
    other = LeaderLease(generation=2, holder="b", session_id="b-s1", expires_at_ms=2000)
    assert isinstance(a.on_observed(other, 100)[0], RevokeLeadership)
    lease = _acquire(a, None, 0)
    a.on_observed(lease, 100)  # a renewal...
    [revoke] = a.on_write_result(False, 100)  # ...whose generation another wrote first
    assert isinstance(revoke, RevokeLeadership) and a.state is LeaderState.STANDBY
    # two contenders racing for one generation: the loser stays standby
    b.on_observed(None, 0)
    assert b.on_write_result(False, 0) == [] and b.state is LeaderState.STANDBY
    b.validate()


@pytest.mark.timeout(10)
def test_release_and_fencing() -> None:
    a, b = _election("a"), _election("b")
    lease = _acquire(a, None, 0)
    assert lease_accepts(lease, lease.session_id, 10) and not lease_accepts(lease, "other", 10)
    assert not lease_accepts(lease, lease.session_id, 1000) and not lease_accepts(None, "x", 0)
    write, revoke = a.release(lease, 10)
    assert isinstance(write, WriteLease) and write.lease.released and isinstance(revoke, RevokeLeadership)
    assert _acquire(b, write.lease, 11).generation == 3  # no waiting for the released lease to expire


@pytest.mark.timeout(10)
def test_the_lease_store_lets_one_writer_win_each_generation(tmp_path: Path) -> None:
    store = FileLeaseStore(str(tmp_path))
    assert store.read_latest() is None
    wins: list[str] = []

    def contend(name: str) -> None:
        lease = LeaderLease(generation=1, holder=name, session_id=name, expires_at_ms=10)
        if FileLeaseStore(str(tmp_path)).try_write(lease):
            wins.append(name)

    threads = [threading.Thread(target=contend, args=(f"c{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert len(wins) == 1
    latest = store.read_latest()
    assert latest is not None and latest.holder == wins[0]
    for g in range(2, 20):
        assert store.try_write(LeaderLease(generation=g, holder="x", session_id="x", expires_at_ms=g))
    store.prune(19)
    assert len(list((tmp_path / "leader").glob("lease-*.json"))) <= 9
    assert store.read_latest() == LeaderLease(generation=19, holder="x", session_id="x", expires_at_ms=19)


@pytest.mark.timeout(10)
def test_stores_layout_and_fencing(tmp_path: Path) -> None:
    leader = [True]

    def fence() -> int:
        if not leader[0]:
            raise LeadershipLostError("not the leader")
        return 1

    graphs = JobGraphStore(str(tmp_path), fence)
    graphs.put_job_graph(JOB, b"graph")
    assert (tmp_path / "jobgraphs" / f"{JOB}.jobgraph").read_bytes() == b"graph"
    assert graphs.job_ids() == [JOB] and graphs.get_job_graph(JOB) == b"graph"
    checkpoints = CompletedCheckpointStore(str(tmp_path), fence)
    for cid in (1, 2, 3):
        checkpoints.add_checkpoint(JOB, CheckpointPointer(checkpoint_id=cid, external_pointer=f"/c/chk-{cid}",
                                                          session_id="s", timestamp_ms=cid))  # fmt: skip
    assert [p.name for p in (tmp_path / "checkpoints" / JOB).iterdir()] == [f"checkpoint-{3:019d}.json"]
    latest = checkpoints.latest(JOB)
    assert latest is not None and latest.external_pointer == "/c/chk-3"
    leader[0] = False
    with pytest.raises(LeadershipLostError):
        checkpoints.add_checkpoint(JOB, CheckpointPointer(checkpoint_id=4, external_pointer="/c/chk-4",
                                                          session_id="s", timestamp_ms=4))  # fmt: skip
    with pytest.raises(LeadershipLostError):
        graphs.remove_job_graph(JOB)
    assert checkpoints.latest(JOB) == latest and graphs.job_ids() == [JOB]
    leader[0] = True
    checkpoints.remove_job(JOB)
    graphs.remove_job_graph(JOB)
    assert checkpoints.latest(JOB) is None and graphs.job_ids() == []


def _pointer(cid: int, session: str) -> CheckpointPointer:
    return CheckpointPointer(checkpoint_id=cid, external_pointer=f"/c/chk-{cid}", session_id=session, timestamp_ms=cid)


@pytest.mark.timeout(10)
def test_a_stale_leaders_late_writes_are_not_acted_on(tmp_path: Path) -> None:
    """Leader A (lease generation 3) pauses between its first lease check and its write; B (generation 5) takes
    over and recovers the job. What A then lands — a checkpoint pointer, a job graph — nobody acts on."""
    a_leads = [True]  # what A's *first* check sees (before its pause)
    a_checks = [0]

    def fence_a() -> int:
        a_checks[0] += 1
        if a_checks[0] % 2 == 0 and not a_leads[0]:  # the check after the write sees B's lease
            raise LeadershipLostError("A lost the lease")
        return 3

    a = CompletedCheckpointStore(str(tmp_path), fence_a, num_retained=2)
    b = CompletedCheckpointStore(str(tmp_path), lambda: 5, num_retained=2)
    for cid in (1, 2):
        a.add_checkpoint(JOB, _pointer(cid, "A"))
    a_leads[0] = False
    restored = b.latest(JOB)  # B recovers from checkpoint 2 ...
    assert restored is not None and restored.checkpoint_id == 2
    with pytest.raises(LeadershipLostError):  # ... while A's write of checkpoint 3 lands before A's second check
        a.add_checkpoint(JOB, _pointer(3, "A"))
    b.record_recovery(JOB, "B", restored)
    assert (tmp_path / "checkpoints" / JOB / f"checkpoint-{3:019d}.json").exists()
    latest = b.latest(JOB)
    assert latest is not None and latest.checkpoint_id == 2  # the stale pointer is not recovered from
    b.add_checkpoint(JOB, _pointer(4, "B"))
    latest = b.latest(JOB)
    assert latest is not None and (latest.checkpoint_id, latest.session_id, latest.lease_generation) == (4, "B", 5)
    with pytest.raises(LeadershipLostError):  # even one past B's newest loses to B's recovery record
        a.add_checkpoint(JOB, _pointer(7, "A"))
    latest = b.latest(JOB)
    assert latest is not None and latest.checkpoint_id == 4
    b.add_checkpoint(JOB, _pointer(5, "B"))  # the stale pointers are dropped, B's two newest kept
    names = sorted(p.name for p in (tmp_path / "checkpoints" / JOB).glob("checkpoint-*.json"))
    assert names == [f"checkpoint-{4:019d}.json", f"checkpoint-{5:019d}.json"]
    # a recovery from the job's start (no pointer) supersedes every older pointer
    c = CompletedCheckpointStore(str(tmp_path), lambda: 9)
    c.record_recovery(JOB, "C", None)
    assert c.latest(JOB) is None

    graphs_a = JobGraphStore(str(tmp_path), fence_a)
    a_checks[0] = 0
    with pytest.raises(LeadershipLostError):  # A's late submission fails, and its graph is not left behind
        graphs_a.put_job_graph(JOB, b"graph")
    assert graphs_a.job_ids() == []


@pytest.mark.timeout(10)
@pytest.mark.parametrize("delete_on_commit", [True, False])
def test_job_result_store_dirty_then_clean(tmp_path: Path, delete_on_commit: bool) -> None:
    from strom.runtime.highavailability.stores import JobResultEntry, JobResultStore

    leader = [True]

    def fence() -> int:
        if not leader[0]:
            raise LeadershipLostError("not the leader")
        return 1

    store = JobResultStore(str(tmp_path), fence, delete_on_commit=delete_on_commit)
    entry = JobResultEntry(job_id=JOB, job_name="sums", application_status="FAILED", net_runtime_ms=5, failure_text="x")
    store.create_dirty_result(entry)
    assert store.entries() == {JOB: (entry, True)}
    assert (tmp_path / "job-results" / f"{JOB}_DIRTY.json").exists()
    leader[0] = False
    with pytest.raises(LeadershipLostError):
        store.mark_result_clean(JOB)
    assert store.entries() == {JOB: (entry, True)}  # a superseded leader leaves the clean-up to the next
    leader[0] = True
    store.mark_result_clean(JOB)
    assert store.entries() == ({} if delete_on_commit else {JOB: (entry, False)})
