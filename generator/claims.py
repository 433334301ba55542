"""Studies shared by several processes or hosts: the storage they point at and the claims in
it that keep two of them from measuring one config."""

from __future__ import annotations

import datetime
import json
import os
import socket
import warnings

import optuna
from optuna.trial import TrialState

from mlpgen.spec import KernelConfig


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


CLAIM_TTL = 900.0  # seconds after which another host's claim is taken to be dead


class Claims:
    """Claims on work, kept in the storage so that every process and host sharing it sees them:
    a claim is a RUNNING trial of the study `<name>|claims`, created in one write with its key
    and its owner (host:pid). Creation orders the claims (trial numbers); a claim holds where no
    live claim of the same key precedes it, so of two processes that claim one key at once
    exactly one gets it, whatever the storage (a journal file, a database). A claim is dead once
    released (FAIL) or when its owner is: a process of this host that is gone, or an owner on
    another host after `ttl` seconds. A killed process thus leaves nothing locked."""

    def __init__(self, storage, name: str, ttl: float = CLAIM_TTL):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            self.study = optuna.create_study(
                storage=storage, study_name=f"{name}|claims", load_if_exists=True
            )
        self.storage = self.study._storage
        self.host = socket.gethostname()
        self.owner = f"{self.host}:{os.getpid()}"
        self.ttl = ttl

    def live(self, t: optuna.trial.FrozenTrial) -> bool:
        if t.state != TrialState.RUNNING:
            return False
        host, _, pid = t.user_attrs.get("owner", ":").rpartition(":")
        if host == self.host:
            return pid.isdigit() and alive(int(pid))
        start = t.datetime_start or datetime.datetime.now()
        return (datetime.datetime.now() - start).total_seconds() < self.ttl

    def holders(self) -> list[optuna.trial.FrozenTrial]:
        return [
            t
            for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
            if self.live(t)
        ]

    def take(self, key: str, **attrs) -> int | None:
        """The claim's trial id, or None where a live claim of `key` precedes ours."""
        template = optuna.trial.create_trial(
            state=TrialState.RUNNING, user_attrs={"key": key, "owner": self.owner, **attrs}
        )
        tid = self.storage.create_new_trial(self.study._study_id, template_trial=template)
        mine = self.storage.get_trial(tid).number
        if any(t.user_attrs.get("key") == key and t.number < mine for t in self.holders()):
            self.release(tid)
            return None
        return tid

    def release(self, tid: int) -> None:
        self.storage.set_trial_state_values(tid, TrialState.FAIL)

    def working(self, study: str) -> bool:
        """Whether someone holds a claim on a bucket's work (a measurement, its PDL pass)."""
        return any(t.user_attrs.get("study") == study for t in self.holders())

    def busy(self, study: str) -> set[KernelConfig]:
        """The configs of a bucket's study that someone is measuring now."""
        return {
            KernelConfig.from_dict(t.user_attrs["config"])
            for t in self.holders()
            if t.user_attrs.get("study") == study and "config" in t.user_attrs
        }


def claim_key(study: str, config: KernelConfig) -> str:
    return f"{study}|{json.dumps(config.to_dict(), sort_keys=True)}"


def make_storage(url_or_storage):
    """An Optuna storage: a URL names a database (an RDBStorage: SQLite, PostgreSQL, MySQL,
    ...), any other string a journal file (Optuna's append-only log, process-safe through a
    file lock); a storage object is used as it is. The journal is the default: the search
    reads its study's trials several times a step, which a journal answers from memory and
    SQLite from disk. Processes on several hosts share a journal on a shared filesystem or a
    server database; two processes may pop one queued trial, and Claims keeps them from both
    measuring it."""
    if not isinstance(url_or_storage, str):
        return url_or_storage
    if "://" in url_or_storage:
        return optuna.storages.RDBStorage(url_or_storage)
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    return JournalStorage(JournalFileBackend(url_or_storage))
