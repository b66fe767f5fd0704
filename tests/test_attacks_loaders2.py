"""Attacks on what reads a user's files and addresses, beyond tests/test_attacks_loaders.py and
test_loader_robustness.py: paths and names holding line breaks or terminal control sequences,
two paths of one file (a hard link), scheduler addresses and scheduler files that are not what
``dask scheduler`` writes, and the number forms ``int()`` accepts but docs/formats.md does not;
text that made the nesting check quadratic, paths no file can have, integers past Python's
4300-digit ``str`` limit in ``info``, hexadecimal values and sums of repeated monomials past
``MAX_INT_DIGITS``, and Dask runs whose report differed from the local one (a stage isolated on a
daemonic worker, a deadline passed during validation, a certificate checked whole in a child)."""

import json
import os
from fractions import Fraction

import pytest
from cases import SQUARE_C, SQUARE_M
from hypothesis import given, settings
from hypothesis import strategies as st
from test_attacks_cli import exit_code as run_cli
from test_attacks_cli import one_line_error

import symverify as sv
from symverify.errors import SerializationError, UsageError
from symverify.ir.serialize import dump_file, dumps, json_value, loads, read_json_file, to_json
from symverify.provers.dask_address import check_address


# ---- a path with a line break: the message was cut at it, leaving "symverify: error: DIR/a" ------
def test_an_error_about_a_path_with_a_line_break_keeps_the_whole_message(tmp_path, capsys):
    bad = tmp_path / "a\nb.json"
    bad.write_text('{"format": 1}', encoding="utf-8")
    good = tmp_path / "good\nc.json"
    dump_file(SQUARE_C, good)
    for argv in (("info", str(bad)), ("verify", str(good), str(bad)), ("report", str(bad))):
        err = one_line_error(capsys, *argv)
        assert "a\\nb.json" in err, err  # the path, escaped, and then what was wrong with the file
        assert ("document.format: expected str, found int" in err) or ("expected a proof run" in err), err
    err = one_line_error(capsys, "info", str(tmp_path / "missing\nx.json"))
    assert "missing\\nx.json" in err and "No such file" in err, err


def test_an_error_about_a_path_with_a_terminal_sequence_shows_it_escaped(tmp_path, capsys):
    bad = tmp_path / "a\x1b[2Kb.json"
    bad.write_text("[]", encoding="utf-8")
    err = one_line_error(capsys, "info", str(bad))
    assert "\x1b" not in err and "a\\x1b[2Kb.json" in err and "expected a JSON object" in err, err


# ---- names are the file's text: shown, never run by the terminal ---------------------------------
def test_info_shows_control_characters_of_a_name_instead_of_sending_them(tmp_path, capsys):
    doc = to_json(SQUARE_C)
    doc["name"] = "evil\r\x1b[2KREFUTED\nsecond line"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert loads(json.dumps(doc)).name == doc["name"]  # a valid file: its name is kept exactly
    code, out, err = run_cli(capsys, "info", str(path))
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out
    assert "  name: evil\\x0d\\x1b[2KREFUTED\\nsecond line\n" in out, out


def test_compile_shows_control_characters_of_a_name_instead_of_sending_them(tmp_path, capsys):
    circuit = sv.Circuit.trace(lambda u: [u[0][0] * u[0][1]], n=1, d=2, name="x\x1b[31m\ny")
    path = tmp_path / "c.json"
    dump_file(circuit, path)
    code, out, err = run_cli(capsys, "compile", str(path), "-o", str(tmp_path / "m.json"))
    assert code == 0, err
    assert "\x1b" not in out + err and "x\\x1b[31m\\ny" in out and out.count("\n") == 1, out
    assert sv.load_file(tmp_path / "m.json").name.startswith("x\x1b[31m\ny")  # the file keeps it exactly


def test_report_names_the_page_it_wrote_on_one_line(tmp_path, capsys):
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"format": "symverify.proof-run", "version": 2, "scripts": []}), encoding="utf-8")
    page = tmp_path / "p\x1b[2Kq\n.html"
    code, out, err = run_cli(capsys, "report", str(run), "-o", str(page))
    assert code == 0, err
    assert out == f"wrote {tmp_path}/p\\x1b[2Kq\\n.html\n" and page.is_file(), out


# ---- lone surrogates: valid JSON escapes, but no text; a run file holding one crashed its readers -
def _run_with_name(name):
    instance = {"name": name, "verdict": "proved", "method": "exact", "ok": True}
    script = {"name": "s", "status": "ok", "ok": True, "result": {"name": "s", "ok": True, "instances": [instance]}}
    return {"format": "symverify.proof-run", "version": 2, "quick": True, "ok": True, "scripts": [script]}


@pytest.mark.parametrize("escape", ["\\ud800", "\\udcff", "a\\udbff", "\\ude00\\ud83d"])
def test_a_run_file_with_a_lone_surrogate_is_refused_by_its_readers(tmp_path, capsys, escape):
    from symverify.viz.resources import load_run

    run = tmp_path / "run.json"
    run.write_text(json.dumps(_run_with_name("X")).replace('"X"', f'"{escape}"'), encoding="utf-8")
    with pytest.raises(SerializationError, match=r"lone surrogate \\ud[89a-f][0-9a-f]{2} at scripts\[0\]\.result\.instances\[0\]\.name"):
        load_run(run)
    err = one_line_error(capsys, "report", str(run), "-o", str(tmp_path / "page.html"))  # was an internal error
    assert "lone surrogate" in err, err
    err = one_line_error(capsys, "prove", "primitives_handwritten", "--quick", "--golden", str(run))
    assert "cannot read the golden run: not valid Unicode text" in err, err
    with pytest.raises(SerializationError, match="lone surrogate"):
        load_run(json.loads(run.read_text(encoding="utf-8")))  # the same run as a dict
    with pytest.raises(SerializationError, match=r"lone surrogate \\ud800 at a\\ud800 \(the key\)"):
        read_json_file(_write(tmp_path / "k.json", '{"a\\ud800": 1}'), "a file")


def test_paired_surrogates_and_text_stay_accepted(tmp_path):
    from symverify.viz.resources import load_run

    run = tmp_path / "run.json"
    run.write_text(json.dumps(_run_with_name("X")).replace('"X"', '"\\ud83d\\ude00 \\u00e9 \\\\ud800"'), encoding="utf-8")
    name = load_run(run)["scripts"][0]["result"]["instances"][0]["name"]
    assert name == "\U0001f600 \u00e9 \\ud800"  # an emoji, é, and the six characters \ud800


def test_a_run_dict_nesting_deeply_or_holding_itself_is_refused_not_walked_forever():
    from symverify.viz.run_format import check_run

    deep: list = []
    cur = deep
    for _ in range(50_000):
        cur.append([])
        cur = cur[0]
    cycle: dict = {}
    cycle["self"] = cycle
    for value, message in ((deep, "nesting deeper than 58"), (cycle, "holding itself")):
        inst = {"name": "i", "verdict": "refuted", "counterexample": value}
        run = {"scripts": [{"name": "s", "status": "failed", "result": {"instances": [inst]}}]}
        with pytest.raises(SerializationError, match=message):
            check_run(run, "run")
    cur.append("\ud800")
    with pytest.raises(SerializationError, match=r"lone surrogate \\ud800 at scripts\[0\]"):
        check_run({"scripts": [{"name": "s", "status": "failed", "result": {"instances": [inst | {"counterexample": deep}]}}]}, "run")


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# ---- two paths of one file -----------------------------------------------------------------------
def test_compile_refuses_an_output_that_is_a_hard_link_to_its_input(tmp_path, capsys):
    circuit, link = tmp_path / "c.json", tmp_path / "link.json"
    dump_file(SQUARE_C, circuit)
    os.link(circuit, link)
    before = circuit.read_bytes()
    err = one_line_error(capsys, "compile", str(circuit), "-o", str(link))
    assert "CIRCUIT.json and -o name the same file" in err, err
    assert circuit.read_bytes() == before  # the circuit was overwritten by its own model


def test_compile_refuses_a_model_and_certificate_that_are_one_file(tmp_path, capsys):
    circuit, out, link = tmp_path / "c.json", tmp_path / "m.json", tmp_path / "cert.json"
    dump_file(SQUARE_C, circuit)
    out.write_text("", encoding="utf-8")
    os.link(out, link)
    err = one_line_error(capsys, "compile", str(circuit), "-o", str(out), "--certificate", str(link))
    assert "-o and --certificate name the same file" in err, err
    assert out.read_text(encoding="utf-8") == ""  # the model was replaced by the certificate


# ---- an empty path (an unset variable in CI): Path("") is the current directory ------------------
def test_an_empty_certificate_is_refused_not_read_as_no_certificate(tmp_path, capsys):
    c, m = tmp_path / "c.json", tmp_path / "m.json"
    dump_file(SQUARE_C, c)
    dump_file(SQUARE_M, m)
    err = one_line_error(capsys, "verify", str(c), str(m), "--certificate", "")
    assert "--certificate: expected a certificate file, found an empty string" in err, err


@pytest.mark.parametrize("flag", ["-o", "--certificate"])
def test_compile_refuses_an_empty_output_path(tmp_path, capsys, flag):
    c = tmp_path / "c.json"
    dump_file(SQUARE_C, c)
    other = ["--certificate", str(tmp_path / "cert.json")] if flag == "-o" else ["-o", str(tmp_path / "m.json")]
    err = one_line_error(capsys, "compile", str(c), flag, "", *other)
    assert f"{flag}: expected a file path, found an empty string" in err, err


@pytest.mark.parametrize("argv", [("info", ""), ("verify", "", "{m}"), ("report", "")])
def test_an_empty_input_path_is_named_as_such(tmp_path, capsys, argv):
    m = tmp_path / "m.json"
    dump_file(SQUARE_M, m)
    err = one_line_error(capsys, *(a.format(m=m) for a in argv))
    assert "cannot read '': expected a file path, found an empty string" in err, err  # was "cannot read ."
    for load in (sv.load_file, lambda p: read_json_file(p, "a run")):
        with pytest.raises(SerializationError, match="found an empty string"):
            load("")


# ---- scheduler addresses and files ---------------------------------------------------------------
@pytest.mark.parametrize("address", ["local\n", "tcp://127.0.0.1:8786\n", "host\n", "tcp://h:1\nx", "tcp://h\x1b:1",
                                     "tcp://h\ud800:1", "tcp://h\u200b:1"])
def test_an_address_with_a_line_break_or_control_character_is_refused(address):
    with pytest.raises(UsageError, match="expected 'local', an address such as tcp://HOST:8786"):
        check_address(address, "--scheduler")


@pytest.mark.parametrize("address", ["local", "tcp://127.0.0.1:8786", "127.0.0.1:8786", "tls://h.example:1/",
                                     "tcp://[::1]:8786", "[fe80::1]:1", "tls://sched-01.cluster-a.example:8786",
                                     "ucx://10.0.0.1:13337", "ws://h:8786", "tcp://[fe80::1%eth0]:8786",
                                     "inproc://10.0.0.5/4242/1"])
def test_addresses_stay_accepted(address):
    check_address(address, "--scheduler")


def test_an_in_process_scheduler_address_as_distributed_makes_it_is_accepted():
    """``LocalCluster(processes=False).scheduler_address`` is ``inproc://HOST/PID/N``, which
    ``verify(..., scheduler=...)`` in the same process can reach; it was refused as no address."""
    inproc = pytest.importorskip("distributed.comm.inproc")
    address = inproc.new_address()
    assert address.startswith("inproc://") and address.count("/") == 4, address
    check_address(address, "scheduler")


@pytest.mark.parametrize("address", ["inproc://h/1", "inproc://h/1/2/3", "inproc://h/x/1", "tcp://[::1%]:1",
                                     "tcp://[fe80::1%eth 0]:1", "tcp://h:1/2"])
def test_addresses_of_no_form_stay_refused(address):
    with pytest.raises(UsageError, match="expected 'local', an address such as tcp://HOST:8786"):
        check_address(address, "--scheduler")


@pytest.mark.parametrize("text, message", [
    ("not json", "cannot read the scheduler file: not valid JSON"),
    ('{"address": 5}', "found address 5"),
    ("[]", "found a JSON list"),
    ('{"type": "Scheduler"}', "found no 'address'"),
    ('{"address": "tcp://h:1\\n"}', r"found address 'tcp://h:1\\n'"),
    ('{"address": "tcp://a:1", "address": "tcp://b:1"}', "duplicate key 'address'"),
    ("\ufeff{}", "byte order mark"),
])
def test_a_scheduler_file_that_dask_does_not_write_is_refused_by_name(tmp_path, text, message):
    path = tmp_path / "sched.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=message) as info:
        check_address(str(path), "--scheduler")
    assert "sched.json" in str(info.value)


def test_a_scheduler_file_that_is_not_a_regular_file_says_so(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match=r"fifo\.json: cannot read the scheduler file: expected a regular file, found a FIFO"):
        check_address(str(fifo), "--scheduler")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(UsageError, match=r"dir\.json: cannot read the scheduler file: expected a regular file, found a directory"):
        check_address(str(tmp_path / "dir.json"), "--scheduler")
    with pytest.raises(UsageError, match="no such scheduler file"):
        check_address(str(tmp_path / "missing.json"), "--scheduler")


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:41234", "tcp://[::1]:41234"])
def test_a_scheduler_file_as_dask_writes_it_is_accepted(tmp_path, address):
    path = tmp_path / "sched.json"
    path.write_text(json.dumps({"type": "Scheduler", "id": "Scheduler-1", "address": address,
                                "services": {}, "started": 1.5, "workers": {}}), encoding="utf-8")
    check_address(str(path), "--scheduler")


def test_a_scheduler_file_of_any_name_is_read_as_one(tmp_path, monkeypatch):
    """``dask scheduler --scheduler-file sched`` (no ``.json``) was read as the host name ``sched``:
    no check of the file, then a connection timeout. Any path that exists is a scheduler file."""
    bad = tmp_path / "sched"
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(UsageError, match=r"sched: expected a scheduler file .*found a JSON list"):
        check_address(str(bad), "--scheduler")
    (tmp_path / "adir").mkdir()
    with pytest.raises(UsageError, match=r"adir: cannot read the scheduler file: expected a regular file, found a directory"):
        check_address(str(tmp_path / "adir"), "--scheduler")
    good = tmp_path / "sched.txt"
    good.write_text(json.dumps({"address": "tcp://127.0.0.1:41234"}), encoding="utf-8")
    check_address(str(good), "--scheduler")
    # and open_client hands it to Dask as a scheduler file, not as an address
    distributed = pytest.importorskip("distributed")
    from symverify.provers.dask_address import open_client

    seen = []

    class FakeClient:
        def __init__(self, *args, **kwargs):
            seen.append((args, kwargs))

        def wait_for_workers(self, n, timeout):
            pass

        def close(self):
            pass

    monkeypatch.setattr(distributed, "Client", FakeClient)
    with open_client(str(good), 1, 5.0):
        pass
    assert seen == [((), {"scheduler_file": str(good), "timeout": 5.0})], seen
    # a name that exists here but is spelled as an address stays an address
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tcp:").mkdir()
    check_address("tcp://sched:1", "--scheduler")
    # a host name with no file of that name stays a host name
    check_address("sched-host", "--scheduler")


def test_a_host_name_that_is_a_directory_here_is_refused_with_the_way_to_mean_the_host(tmp_path, monkeypatch):
    """``--scheduler sched`` with a folder ``sched`` in the working directory was refused as "found a
    directory" with no word of the host: the refusal now says to write ``tcp://sched:PORT``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sched").mkdir()
    with pytest.raises(UsageError, match=r"sched: cannot read the scheduler file: expected a regular file, found a "
                                         r"directory \(read as a scheduler file: .*write tcp://sched:PORT\)"):
        check_address("sched", "--scheduler")
    check_address("tcp://sched:8786", "--scheduler")
    with pytest.raises(UsageError, match=r"sched\.json: no such scheduler file$"):  # a .json name is a file: no hint
        check_address("sched.json", "--scheduler")


def test_the_cli_names_a_bad_scheduler_file_on_one_line(tmp_path, capsys):
    path = tmp_path / "sched.json"
    path.write_text("[]", encoding="utf-8")
    c, m = tmp_path / "c.json", tmp_path / "m.json"
    dump_file(SQUARE_C, c)
    dump_file(SQUARE_M, m)
    err = one_line_error(capsys, "verify", str(c), str(m), "--scheduler", str(path))
    assert "sched.json: expected a scheduler file" in err, err


# ---- number forms: what Python's int() reads, docs/formats.md does not ---------------------------
def _with_coeff(coeff):
    doc = json.loads(dumps(sv.Circuit.trace(lambda u: [u[0][0] * 3], n=1, d=1)))
    gate = next(g for g in doc["gates"] if g[0] == "lin")
    gate[2][0] = coeff
    return json.dumps(doc)


@pytest.mark.parametrize("text", ["1_000", "٣", "١/٢", "３", "1 000", "3\u00a0", "\u20073", "0X10", "0x1F", "0o7",
                                  "0b1", "1e3", "1.0", "inf", "nan", "1/0x", "0x-1", "--1", "+-1", "1/+2", "\x003", ""])
def test_rationals_int_would_read_are_refused(text):
    with pytest.raises(SerializationError, match="expected a rational"):
        loads(_with_coeff(text))


@pytest.mark.parametrize("literal", ["1.0", "1e999999", "-1e999999", "1E400", "0.1", "1" + "0" * 5000, "NaN", "-Infinity"])
def test_json_number_literals_that_are_not_exact_small_ints_are_refused(literal):
    doc = _with_coeff("X").replace('"X"', literal)
    with pytest.raises(SerializationError, match="expected an integer, a rational string"):
        loads(doc)


@pytest.mark.parametrize("text, value", [("-0/1", 0), ("+3", 3), (" 3", 3), ("\t3\n", 3), ("0x10", 16), ("00", 0),
                                         ("6 / 4", Fraction(3, 2)), ("-0x0/0x1", 0)])
def test_rationals_the_format_states_read_as_written(text, value):
    circuit = loads(_with_coeff(text))
    gate = next(g for g in circuit.gates if g.op.value == "lin")
    assert gate.coeffs[0] == value and type(gate.coeffs[0]) is type(value)


@settings(max_examples=60, deadline=None)
@given(st.fractions(), st.text(st.characters(codec="utf-8"), min_size=1, max_size=12))
def test_a_valid_circuit_round_trips_exactly(q, name):
    circuit = sv.Circuit.trace(lambda u: [u[0][0] * q], n=1, d=1, name=name)
    text = dumps(circuit)
    again = loads(text)
    assert again.name == name and again.gates == circuit.gates and dumps(again) == text


# ---- the nesting check scanned the text once per quote of an unterminated string ----------------
@pytest.mark.parametrize("reader", [loads, json_value])
def test_an_unterminated_string_of_escaped_quotes_is_refused_in_linear_time(reader):
    """``[`` 65 times, then ``\\"`` repeated: every quote began a string match that ran to the end
    of the text and failed, so the depth check cost the square of the length (60 kB: seconds,
    1 MB: hours)."""
    import time

    text = "[" * 65 + '\\"' * 30_000
    start = time.perf_counter()
    with pytest.raises(SerializationError, match="nested 65 levels deep"):
        reader(text)
    assert time.perf_counter() - start < 2.0
    with pytest.raises(SerializationError, match=r"not valid JSON \(truncated\?\): Unterminated string"):
        reader('["' + "[" * 70 + '\\"' * 10)  # the brackets are inside an unterminated string: its own error


def test_a_file_of_escaped_quotes_is_refused_by_the_cli_at_once(tmp_path, capsys):
    import time

    path = tmp_path / "q.json"
    path.write_text("{" * 65 + '"\\"' * 40_000, encoding="utf-8")
    start = time.perf_counter()
    err = one_line_error(capsys, "info", str(path))
    assert "nested 65 levels deep" in err and time.perf_counter() - start < 2.0, err


# ---- Dask: a stage planned into a memory-limited process, on a worker that is a daemonic process --
def _power_of_a_sum(constant_squarings: int = 0):
    """``(Σ u)^16`` over 8 inputs with a one-stage certificate: 245 157 monomials, a stage whose
    certified size sends it to the memory-limited child process (not in-process, not refused);
    with ``constant_squarings``, a second output ``3^(2^squarings)``."""

    def f(u):
        s = u[0][0]
        for x in u[0][1:] + u[1]:
            s = s + x
        for _ in range(4):
            s = s * s
        k = u[0][0] * 0 + 3
        for _ in range(constant_squarings):
            k = k * k
        return [s, k] if constant_squarings else [s]

    c = sv.Circuit.trace(f, n=2, d=4)
    comp = sv.compile(c)
    bs = comp.certificate.boundaries
    return c, comp.model, sv.Certificate((bs[0], bs[-1]))


def test_an_isolated_stage_on_dask_worker_processes_gives_the_local_report():
    """A worker of ``LocalCluster(processes=True)`` (``--scheduler local``, ``dask worker``) is a
    daemonic process, which ``multiprocessing`` forbids to start children: the stage's task raised
    twice and the verdict was unknown ("crashed") where the local run proved it, and a wrong model
    was unknown where the local run refuted it at stage 0.

    With a coefficient of more than 2^20 bits (3^(2^21)) the local run checks the whole certificate
    in a memory-limited child, where stages were never isolated (a daemonic child had no children
    either): ``stages_isolated`` was 0 there and 1 on Dask, for the same stage."""
    import logging

    distributed = pytest.importorskip("distributed")
    from symverify.mutate import weight_mutant

    c, model, cert = _power_of_a_sum()
    bad = weight_mutant(model, 0, ("inc",)).obj
    big_c, big_model, big_cert = _power_of_a_sum(21)
    local = [sv.verify(c, m, method="compositional", certificate=cert) for m in (model, bad)]
    local.append(sv.verify(big_c, big_model, method="compositional", certificate=big_cert))
    assert [r.verdict.value for r in local] == ["proved", "refuted", "proved"]
    assert local[1].evidence["failed_stage"] == 0
    assert local[0].evidence["stages_isolated"] == local[2].evidence["stages_isolated"] == 1
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as cluster, distributed.Client(cluster) as client:
        remote = [sv.verify(c, m, method="compositional", certificate=cert, scheduler=client) for m in (model, bad)]
        remote.append(sv.verify(big_c, big_model, method="compositional", certificate=big_cert, scheduler=client))
    assert local == remote  # every field but the times (Report's ==)


def test_a_deadline_that_passes_while_the_certificate_is_validated_is_the_local_timeout():
    """``check_certificate`` answers a deadline passed during the certificate's validation with a
    ``timeout`` result; the Dask variant raised ``DeadlineExceededError`` instead (its docstring
    promises the local result)."""
    import time
    from dataclasses import replace

    pytest.importorskip("distributed")
    from conftest import local_dask_client

    from symverify.kernel.provers.compositional import check_certificate
    from symverify.kernel.provers.stages_dask import check_certificate_dask
    from symverify.library import random_circuit

    c = random_circuit(2, 2, 8, 3, seed=1)
    comp = sv.compile(c)
    past = time.monotonic() - 1.0
    local = check_certificate(c, comp.model, comp.certificate, deadline=past)
    assert local.stopped == "timeout" and local.stages_checked == 0
    with local_dask_client(1) as client:
        remote = check_certificate_dask(c, comp.model, comp.certificate, scheduler=client, deadline=past)
    assert replace(remote, seconds=0.0) == replace(local, seconds=0.0)


# ---- a path no file can have: a NUL character, or no path at all ---------------------------------
@pytest.mark.parametrize("read", [sv.load_file, lambda p: read_json_file(p, "the golden run")])
def test_reading_a_path_with_a_nul_or_of_another_type_is_a_serialization_error(tmp_path, read):
    """``os.open`` raises ``ValueError`` on an embedded NUL and ``Path`` a ``TypeError`` on
    ``None``, bytes or a number: both escaped the loaders as Python's own errors."""
    with pytest.raises(SerializationError, match=r"cannot read '.*c\.json\\x00x': expected a file path, found one "
                                                 r"holding a NUL character"):
        read(str(tmp_path / "c.json") + "\x00x")
    for bad, kind in ((None, "NoneType"), (b"c.json", "bytes"), (3, "int")):
        with pytest.raises(SerializationError, match=rf"cannot read: expected a file path \(str or os\.PathLike\), "
                                                     rf"found {kind}"):
            read(bad)


def test_writing_a_path_with_a_nul_or_of_another_type_is_a_serialization_error(tmp_path):
    with pytest.raises(SerializationError, match=r"cannot write '.*m\.json\\x00': expected a file path, found one "
                                                 r"holding a NUL character"):
        dump_file(SQUARE_M, str(tmp_path / "m.json") + "\x00")
    with pytest.raises(SerializationError, match=r"cannot write: expected a file path \(str or os\.PathLike\), found NoneType"):
        dump_file(SQUARE_M, None)
    assert list(tmp_path.iterdir()) == []


# ---- symverify info of a valid circuit whose degree bound has more digits than str() writes -----
def test_info_shows_a_degree_bound_beyond_pythons_int_str_limit(tmp_path, capsys):
    """15 001 squarings: degree 2^15001 (4516 digits). ``str()`` and ``json.dumps`` refuse an int
    beyond 4300 digits, so ``info`` of this valid file was an internal error; the text shows the
    bound abbreviated, the JSON exactly (as a verify report writes integers)."""
    squarings = 15_001
    gates = [["mul", [k, k], []] for k in range(squarings)]
    path = tmp_path / "deg.json"
    path.write_text(json.dumps({"format": "symverify.circuit", "version": 1, "n": 1, "d": 1, "gates": gates,
                                "outputs": [squarings]}), encoding="utf-8")
    code, out, err = run_cli(capsys, "info", str(path))
    assert code == 0 and err == "", err
    assert "  degree_bound: <4516-digit integer ≡ " in out, out
    code, out, err = run_cli(capsys, "info", "--json", str(path))
    assert code == 0 and err == "", err
    from symverify.ir.bigint import parse_rational

    assert parse_rational(json.loads(out)["degree_bound"]) == 2**squarings


# ---- a hexadecimal integer past MAX_INT_DIGITS decimal digits ------------------------------------
def test_a_hexadecimal_coefficient_beyond_max_int_digits_is_refused_when_read():
    """The hexadecimal reader bounded the bits by ``MAX_INT_DIGITS · 3.33`` (log2 10 is 3.3219…),
    so up to about 245 decimal digits more than the limit were read, and the circuit could not be
    written back (``dumps`` refuses beyond the limit)."""
    from symverify.ir import limits

    over = "0x" + "f" * 83_100  # 2^332400 − 1: 100 063 decimal digits
    with pytest.raises(SerializationError, match=r"gates\[0\]\.coeffs\[0\]: an integer of 100063 digits is more than "
                                                 r"symverify\.ir\.limits\.MAX_INT_DIGITS = 100000"):
        loads(_with_coeff(over))
    top = 10**limits.MAX_INT_DIGITS - 1  # the largest integer within the limit, written in hexadecimal
    circuit = loads(_with_coeff(f"0x{top:x}"))
    gate = next(g for g in circuit.gates if g.op.value == "lin")
    assert gate.coeffs[0] == top and loads(dumps(circuit)).gates == circuit.gates
    with pytest.raises(SerializationError, match="an integer of 100001 digits"):
        loads(_with_coeff(f"0x{top + 1:x}"))


# ---- repeated monomials of a symbolic value add up: the sum stays within MAX_INT_DIGITS ----------
def test_repeated_monomials_whose_sum_passes_max_int_digits_are_refused_when_read():
    """Each coefficient within the limit, their sum past it: ``2·(10^100000 − 1)`` was read (and could
    not be written back), and unit fractions of distinct 20 000-digit denominators made a
    denominator growing with every term, each addition slower than the last (800 kB: a minute)."""
    nines = "9" * 100_000
    for terms in ([[nines, {"a": 1}], [nines, {"a": 1}]], [[nines, {}], [nines, {}]]):
        with pytest.raises(SerializationError, match=r"gates\[0\]\.coeffs\[0\]\.sym\[1\]: an integer of 100001 digits is "
                                                     r"more than symverify\.ir\.limits\.MAX_INT_DIGITS = 100000"):
            loads(_with_coeff({"sym": terms}))
    import time

    denominators = ["1" + "0" * 19_990 + f"{2 * k + 1:09d}" for k in range(40)]  # 20 000 digits, nearly coprime
    start = time.perf_counter()
    with pytest.raises(SerializationError, match=r"sym\[5\]: an integer of 1[0-9]{5} digits is more than"):
        loads(_with_coeff({"sym": [[f"1/{q}", {}] for q in denominators]}))
    assert time.perf_counter() - start < 10.0
    kept = loads(_with_coeff({"sym": [["1/2", {"a": 1}], ["1/3", {"a": 1}], [nines, {}], ["-" + nines, {}]]}))
    gate = next(g for g in kept.gates if g.op.value == "lin")
    assert gate.coeffs[0] == sv.sym("a") * Fraction(5, 6)  # within the limit, repeated monomials still add up


def _square_in_a_child(x):
    from symverify.kernel.provers.guard import run_limited

    return run_limited(pow, (x, 2), memory=1 << 30, timeout=20).value


def test_a_memory_limited_child_starts_its_own_limited_child():
    """``run_limited`` inside ``run_limited`` (a certificate checked whole in a child, whose stage
    runs in a child of its own): the inner start must neither be refused (the child is daemonic) nor
    wait for the lock its parent held when it forked."""
    from symverify.kernel.provers.guard import run_limited

    out = run_limited(_square_in_a_child, (7,), memory=1 << 30, timeout=30)
    assert (out.status, out.value) == ("ok", 49), out


def _start_a_limited_child(out):
    from symverify.kernel.provers.guard import run_limited

    out.put(run_limited(pow, (6, 2), memory=1 << 30, timeout=20).value)


def test_a_process_forked_elsewhere_while_a_limited_child_starts_can_start_its_own():
    """Another thread's fork (a process pool, a scheduler's worker) during ``_start`` copies the start
    lock held: the copy was never released there, so every ``run_limited`` of that process waited
    for ever. Each forked process starts with a fresh lock, whoever forked it."""
    import multiprocessing as mp

    from symverify.kernel.provers import guard

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork start method")
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    with guard._STARTING:  # as while another thread is inside _start
        proc = ctx.Process(target=_start_a_limited_child, args=(out,), daemon=True)
        proc.start()
    try:
        assert out.get(timeout=15) == 36
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


def _sleep_after_writing_pid(path):
    import time

    with open(path, "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(60)


def _limited_sleeper(path):
    from symverify.kernel.provers.guard import run_limited

    return run_limited(_sleep_after_writing_pid, (path,), memory=1 << 30, timeout=120)


def _running(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except OSError:
        return False


def test_a_limited_child_killed_at_its_timeout_takes_its_own_limited_child_with_it(tmp_path):
    """A certificate checked whole in a limited child isolates its stages in children of that child: when
    the deadline passes the child is killed (SIGKILL, no exit handler runs), and its own child went on
    computing, an orphan with no deadline. A limited child dies with the process that started it."""
    import time

    from symverify.kernel.provers.guard import run_limited

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc to see the process")
    path = tmp_path / "pid"
    out = run_limited(_limited_sleeper, (str(path),), memory=1 << 30, timeout=3)
    assert out.status == "timeout"
    pid = int(path.read_text())
    end = time.monotonic() + 5
    while _running(pid) and time.monotonic() < end:
        time.sleep(0.1)
    try:
        assert not _running(pid), "the inner child outlived the child that started it"
    finally:
        if _running(pid):
            os.kill(pid, 9)
