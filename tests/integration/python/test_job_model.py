"""tony.Job and tony.TaskSpec mirror job.toml: every key round-trips, the
schema is the job.toml reader's (config/toml_reader*.cpp), and bad input is
refused with job.toml's own messages before anything is submitted."""

import re
import subprocess

import pytest

import conftest
import tony
from tony import job as jobmod
from tony import _cli

try:
    import tomllib
except ImportError:
    import tomli as tomllib

# A value for every key that job.toml accepts; keys not named here get one by
# their kind. A key added to tony.job.SCHEMA is covered by these tests as it
# is; name it here only if its generic value is not a valid one.
GENERIC = {
    jobmod.STRING: "x",
    jobmod.INTEGER: 2,
    jobmod.BOOLEAN: True,
    jobmod.SIZE: "1g",
    jobmod.DURATION: "90s",
    jobmod.STRINGS: ["nightly", "team-a"],
    jobmod.ENV: {"A": "1", "B": 2, "C": True},
    jobmod.INDEX: {"0": {"memory": "1g", "vcores": 2, "gpus": 0}},
    jobmod.FILES: [],  # every files key is named in specific()
}

# Keys the job model holds but tony-submit refuses for now ("not supported
# yet", exit 2): left out when tony-submit checks the whole job.
NOT_YET = {("docker", "image"), ("tasks.*", "docker_image")}


def specific(tmp):
    venv = tmp / "venv.tar.gz"
    venv.write_bytes(b"")
    (tmp / "src").mkdir(exist_ok=True)
    (tmp / "conf").mkdir(exist_ok=True)
    for name in ("vocab.txt", "dict.txt", "ps.conf", "model.zip", "data.tgz", "alice.keytab",
                 "ca.pem"):
        (tmp / name).write_bytes(b"")
    return {
        "code.files": [str(tmp / "vocab.txt"), {"source": str(tmp / "dict.txt"),
                                                "name": "words.txt"}],
        "code.archives": [{"source": str(tmp / "model.zip"), "name": "model"}],
        "tasks.*.files": [str(tmp / "ps.conf")],
        "tasks.*.archives": [str(tmp / "data.tgz")],
        "code.python_binary_path": "bin/python3",
        "security.principal": "alice@TONY.TEST",
        "security.keytab": str(tmp / "alice.keytab"),
        "security.file_systems": ["hdfs://nn2.example:8020"],
        "security.ca_file": str(tmp / "ca.pem"),
        "docker.image": "registry.example/team/train:1.0",
        "docker.mounts": ["/data:/data:ro"],
        "docker.network": "bridge",
        "docker.run_options": ["--shm-size=1g"],
        "tensorboard.on": "sidecar",
        "tasks.*.docker_image": "registry.example/team/train:1.0",
        "name": "every-key",
        "framework": "pytorch",
        "queue": "second",
        "code.src_dir": str(tmp / "src"),
        "code.command": "python3 train.py",
        "code.python_venv": str(venv),
        "tasks.*.command": "python3 train.py --worker",
        "tasks.*.node_label": "gpu",
        "tasks.*.placement": "pack",
        "tasks.*.sidecar": False,
        "tasks.*.restart": "on-failure",
        "tasks.*.spec_signal": "USR1",
        "tasks.*.restart_backoff": "1s",
        "tensorboard.log_dir": "/tmp/tb",
        "data.input_path": "hdfs:///in",
        "data.output_path": "hdfs:///out",
        "policy.heartbeat_interval": "1s",
        "policy.heartbeat_timeout": "20s",
        "cluster.backend": "local",
        "cluster.hadoop_conf": str(tmp / "conf"),
        "cluster.install_dir": "/opt/tony",
        "cluster.staging_dir": str(tmp / "staging"),
        "cluster.jobs_dir": str(tmp / "jobs"),
        "cluster.history_dir": str(tmp / "history"),
    }


def every_key(schema, tmp, prefix=""):
    """A job.toml document that sets every key of `schema`."""
    values = specific(tmp)
    doc = {}
    for key, kind in schema.items():
        path = f"{prefix}{key}"
        if kind is jobmod.TASKS:
            doc[key] = {"worker": every_key(jobmod.TASK_KEYS, tmp, "tasks.*.")}
        elif isinstance(kind, dict):
            doc[key] = every_key(kind, tmp, path + ".")
        else:
            doc[key] = values.get(path, GENERIC[kind])
    return doc


def test_every_key_round_trips_through_job_toml(tmp_path):
    doc = every_key(jobmod.SCHEMA, tmp_path)
    job = tony.Job(**doc)
    text = job.to_toml()
    assert tomllib.loads(text) == doc  # the file says exactly what the Job says
    path = tmp_path / "job.toml"
    path.write_text(text)
    again = tony.Job.from_toml(path)
    assert again.to_dict() == doc
    assert again == job
    # TaskSpec and Job objects rebuilt from the dict are equal too.
    assert tony.Job(**again.to_dict()) == job
    assert job.tasks["worker"] == tony.TaskSpec(**doc["tasks"]["worker"])


def test_every_key_is_accepted_by_tony_submit(tmp_path):
    doc = every_key(jobmod.SCHEMA, tmp_path)
    for section, key in NOT_YET:
        table = doc["tasks"]["worker"] if section == "tasks.*" else doc[section]
        del table[key]
    spec = tony.Job(**doc).validate()
    worker = [t for t in spec["tasks"] if t["name"] == "worker"][0]
    assert worker["instances"] == 2
    assert spec["queue"] == "second"
    assert spec["policy"]["heartbeat_timeout_ms"] == 20000


def _cpp_keys():
    """The keys the job.toml reader's check_keys() calls accept, by table
    (config/toml_reader*.cpp, one file per group of sections)."""
    text = "".join(p.read_text() for p in
                   sorted((conftest.SOURCE_DIR / "config").glob("toml_reader*.cpp")))
    found = {}
    for m in re.finditer(r'check_keys\(\s*[*\w]+,\s*("[^"]*"|\w+),\s*\{([^}]*)\}', text):
        where = m.group(1).strip('"[]')
        keys = re.findall(r'"([a-z_]+)"', m.group(2))
        found["<task>" if where == "where" else where] = set(keys)
    return found


def _python_keys():
    found = {}

    def walk(schema, where):
        found[where] = set(schema)
        for k, kind in schema.items():
            if isinstance(kind, dict):
                walk(kind, f"{where}.{k}" if where else k)
    walk(jobmod.SCHEMA, "")
    found["<task>"] = set(jobmod.TASK_KEYS)
    # The reader checks a { source, name } entry as `label` and a
    # task's own capability as `place`.
    found["label"] = set(jobmod.FILE_ENTRY_KEYS)
    found["place"] = set(jobmod.INDEX_KEYS)
    return found


def test_schema_has_every_key_of_the_toml_reader():
    cpp = _cpp_keys()
    assert "" in cpp and "<task>" in cpp and "code" in cpp, cpp  # the parse worked
    assert _python_keys() == cpp


@pytest.mark.parametrize("mistake,toml_text", [
    (dict(tasks={"worker": {"instaces": 2}}), "[tasks.worker]\ninstaces = 2\n"),
    (dict(am={"colour": "red"}), '[am]\ncolour = "red"\n'),
    (dict(tasks={"worker": {"instances": "2"}}), '[tasks.worker]\ninstances = "2"\n'),
    (dict(tags="nightly"), 'tags = "nightly"\n'),
    (dict(policy={"stop_grace": 1.5}), "[policy]\nstop_grace = 1.5\n"),
    (dict(framwork="pytorch"), 'framwork = "pytorch"\n'),
])
def test_bad_keys_and_types_raise_job_toml_messages(tmp_path, mistake, toml_text):
    with pytest.raises(tony.JobConfigError) as py:
        tony.Job(**mistake)
    path = tmp_path / "job.toml"
    path.write_text(toml_text + '\n[code]\ncommand = "true"\n')
    proc = subprocess.run([_cli.find_tony_submit(), str(path), "--dry-run"],
                          capture_output=True, text=True, env=_cli.environment())
    assert proc.returncode == 2, proc.stderr
    cpp_messages = [re.sub(r"^\S+:\d+:\d+: ", "", line) for line in proc.stderr.splitlines()]
    assert str(py.value) in cpp_messages, (str(py.value), cpp_messages)


def test_task_spec_refuses_unknown_arguments_at_once():
    with pytest.raises(tony.JobConfigError, match="unknown key 'vcore'.*did you mean 'vcores'"):
        tony.TaskSpec(vcore=2)
    with pytest.raises(tony.JobConfigError, match="'gpus' must be an integer, got string"):
        tony.TaskSpec(gpus="1")
    spec = tony.TaskSpec(instances=2)
    with pytest.raises(tony.JobConfigError, match="'memory' must be"):
        spec.memory = [1]


def test_validate_reports_what_only_tony_submit_checks(tmp_path):
    job = tony.Job(code={"command": "true", "src_dir": str(tmp_path)},
                   tasks={"worker": tony.TaskSpec(instances=0, memory="lots")})
    with pytest.raises(tony.JobConfigError) as e:
        job.validate()
    text = str(e.value)
    assert "'instances' must be between 1 and 10000, got 0" in text
    assert "'memory' = \"lots\" is not a size" in text


def test_from_toml_applies_overrides_like_set(tmp_path):
    (tmp_path / "job.toml").write_text('[code]\ncommand = "true"\n[tasks.worker]\n')
    job = tony.Job.from_toml(tmp_path / "job.toml",
                             ["tasks.worker.instances=4", "timeout=30m",
                              'name="true"', "env.LR=0.1"])
    assert job.tasks["worker"].instances == 4
    assert job.timeout == "30m"
    assert job.name == "true"
    assert job.env == {"LR": 0.1}
    assert job.code["src_dir"] == str(tmp_path)
    job2 = tony.Job.from_toml(tmp_path / "job.toml", {"tasks.worker.gpus": 1})
    assert job2.tasks["worker"].gpus == 1
    with pytest.raises(tony.JobConfigError, match="expected KEY=VALUE"):
        tony.Job.from_toml(tmp_path / "job.toml", ["tasks.worker.instances"])


def test_from_toml_reports_syntax_errors_with_the_file(tmp_path):
    (tmp_path / "job.toml").write_text("[code\n")
    with pytest.raises(tony.JobConfigError, match="job.toml: TOML syntax error"):
        tony.Job.from_toml(tmp_path / "job.toml")
    with pytest.raises(tony.JobConfigError, match="cannot read the file"):
        tony.Job.from_toml(tmp_path / "missing.toml")


def test_relative_files_are_made_absolute_against_the_job_toml(tmp_path):
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "job.toml"
    path.write_text('[code]\ncommand = "true"\nfiles = ["vocab.txt", '
                    '{ source = "dict.txt", name = "d" }, "hdfs:///x"]\n'
                    '[tasks.worker]\narchives = ["data.tgz"]\n')
    job = tony.Job.from_toml(path)
    base = str(tmp_path.resolve() / "sub")
    assert job.code["files"] == [base + "/vocab.txt", {"source": base + "/dict.txt",
                                                       "name": "d"}, "hdfs:///x"]
    assert job.tasks["worker"].archives == [base + "/data.tgz"]
