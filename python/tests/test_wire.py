"""The protocol's golden vectors, decoded and re-encoded as the Java and C implementations do."""

import pathlib
import unittest

from falkon import wire

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "protocol" / "src" / "test" / "resources" / "vectors"


def expected_lines(txt):
    return [line for line in txt.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


class GoldenVectorTest(unittest.TestCase):
    def vectors(self):
        bins = sorted(VECTORS.glob("*.bin"))
        self.assertGreater(len(bins), 30, f"golden vectors not found in {VECTORS}")
        return bins

    def test_every_vector_decodes_to_its_description(self):
        for b in self.vectors():
            with self.subTest(vector=b.name):
                msg = wire.decode(b.read_bytes())
                self.assertEqual(expected_lines(b.with_suffix(".txt")), wire.dump(msg))

    def test_every_vector_re_encodes_to_identical_bytes(self):
        for b in self.vectors():
            with self.subTest(vector=b.name):
                data = b.read_bytes()
                self.assertEqual(data, wire.encode(wire.decode(data)))


    def test_the_direct_deliver_decoder_agrees_with_the_table(self):
        data = (VECTORS / "20_deliver.bin").read_bytes()
        self.assertEqual(wire.decode(data, generic=True), wire.decode(data))
        for cut in range(6, len(data)):  # every truncation is refused by both, never misread
            with self.assertRaises(wire.ProtocolError):
                wire.decode_body(0x24, data[5:cut])
            with self.assertRaises(wire.ProtocolError):
                wire.decode_body(0x24, data[5:cut], generic=True)

    def test_encode_task_matches_the_table(self):
        spec = wire.task_spec(["/bin/echo", "é"], {"A": "1"}, "/tmp", 2500, retries=5)
        frame = wire.encode({"type": "SUBMIT", "requestId": 1, "instanceId": 2,
                             "tasks": [{"clientTaskId": 3, "spec": spec}]})
        self.assertEqual(spec, wire.decode(frame)["tasks"][0]["spec"])


    def test_resources_are_the_field_the_java_client_writes(self):
        task = wire.decode((VECTORS / "40_dispatch_resources.bin").read_bytes())["tasks"][0]
        self.assertEqual(wire.resources_ext(4, 2048), task["spec"]["ext"])
        self.assertEqual([], wire.resources_ext())
        self.assertEqual([(wire.EXT_RESOURCES, bytes([0, 0, 0, 1, 0, 0, 0, 0]))], wire.resources_ext(cores=1))
        for bad in ({"cores": 0}, {"cores": 2.5}, {"cores": True}, {"memory": -1}, {"memory": 2**32}):
            with self.assertRaises(ValueError, msg=str(bad)):
                wire.resources_ext(**bad)

    def test_disk_is_the_field_the_java_client_writes(self):
        task = wire.decode((VECTORS / "49_dispatch_disk.bin").read_bytes())["tasks"][0]
        self.assertEqual(wire.resources_ext(2, 512) + wire.disk_ext(20480), task["spec"]["ext"])
        self.assertEqual([], wire.disk_ext())
        self.assertEqual([], wire.disk_ext(0), "0 states nothing")
        for bad in (-1, 2**32, 1.5, True, "1g"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                wire.disk_ext(bad)

    def test_named_resources_are_the_field_the_java_client_writes(self):
        task = wire.decode((VECTORS / "54_dispatch_named_resources.bin").read_bytes())["tasks"][0]
        self.assertEqual(wire.named_resources_ext(gpus=2, resources={"license": 1}), task["spec"]["ext"])
        self.assertEqual(wire.named_resources_ext(resources={"license": 1, "gpus": 2}), task["spec"]["ext"],
                         "names sorted, whatever the order given")
        self.assertEqual([], wire.named_resources_ext())
        self.assertEqual([], wire.named_resources_ext(gpus=0), "0 asks nothing")
        for bad in ({"gpus": -1}, {"gpus": 1.5}, {"gpus": True}, {"resources": {"Licence": 1}},
                    {"resources": {"cores": 2}}, {"resources": {"x" * 33: 1}}, {"gpus": 1, "resources": {"gpus": 1}},
                    {"resources": {"license": 1_000_001}}):
            with self.assertRaises(ValueError, msg=repr(bad)):
                wire.named_resources_ext(**bad)

    def test_register_offers_named_resources_as_an_attribute(self):
        reg = wire.decode((VECTORS / "53_register_resources.bin").read_bytes())
        self.assertEqual("gpus=4,license=2", reg["attributes"]["resources"])

    def test_priority_is_the_signed_32_bit_field_the_java_client_writes(self):
        tasks = wire.decode((VECTORS / "39_submit_priority.bin").read_bytes())["tasks"]
        self.assertEqual([(wire.EXT_PRIORITY, b"\x00\x00\x00\x0a")], wire.priority_ext(10))
        self.assertEqual(wire.priority_ext(10), tasks[0]["spec"]["ext"])
        self.assertEqual(wire.priority_ext(-1), tasks[1]["spec"]["ext"])
        self.assertEqual([], wire.priority_ext(0))
        for bad in (2**31, -2**31 - 1, 1.5, True, "10"):
            with self.assertRaises(ValueError):
                wire.priority_ext(bad)


class MalformedFrameTest(unittest.TestCase):
    def submit_frame(self):
        return (VECTORS / "18_submit.bin").read_bytes()

    def test_truncated_frame_names_the_field(self):
        data = self.submit_frame()
        body = data[4:-3]
        with self.assertRaisesRegex(wire.ProtocolError, r"SUBMIT\.tasks\[1\]\.spec: count 38 exceeds the frame"):
            wire.decode_body(body[0], body[1:])

    def test_trailing_bytes_are_refused(self):
        data = self.submit_frame()
        with self.assertRaisesRegex(wire.ProtocolError, "trailing"):
            wire.decode_body(data[4], data[5:] + b"\x00")

    def test_count_larger_than_the_frame_is_refused_before_allocating(self):
        # CANCEL with a count of 2^31-1 task ids and no bytes behind it
        body = b"\x7f\xff\xff\xff"
        with self.assertRaisesRegex(wire.ProtocolError, "CANCEL.taskIds: count 2147483647 exceeds the frame"):
            wire.decode_body(0x14, body)

    def test_unknown_type_and_bad_length(self):
        with self.assertRaisesRegex(wire.ProtocolError, "unknown message type 0x7F"):
            wire.decode_body(0x7F, b"")
        with self.assertRaisesRegex(wire.ProtocolError, "frame length"):
            wire.decode(b"\x01\x00\x00\x00\x03" + b"\x00" * 8, max_frame_length=1024)

    def test_spec_blob_must_be_consumed_exactly(self):
        spec = wire.encode_spec(wire.task_spec(["/bin/true"])) + b"\x00"
        body = (b"\x00\x00\x00\x01" + b"\x00" * 8 + b"\x00\x00\x00\x01" + b"\x00" * 8
                + len(spec).to_bytes(4, "big") + spec)
        with self.assertRaisesRegex(wire.ProtocolError, r"SUBMIT\.tasks\[0\]\.spec: 1 trailing bytes"):
            wire.decode_body(0x22, body)

    def test_task_spec_refuses_empty_argv(self):
        with self.assertRaises(ValueError):
            wire.task_spec([])
        with self.assertRaises(ValueError):
            wire.task_spec([""])


if __name__ == "__main__":
    unittest.main()


class WorkerFramingTest(unittest.TestCase):
    """The persistent-worker framing (falkon.resident) against its golden vectors."""

    DIR = VECTORS.parent / "worker-vectors"

    def test_requests_and_responses_decode_and_re_encode_to_the_vectors(self):
        from falkon import resident
        bins = sorted(self.DIR.glob("*.bin"))
        self.assertEqual(4, len(bins), f"worker vectors not found in {self.DIR}")
        for b in bins:
            with self.subTest(vector=b.name):
                data = b.read_bytes()
                self.assertEqual(len(data) - 4, int.from_bytes(data[:4], "big"))
                want = expected_lines(b.with_suffix(".txt"))
                if want[0] == "frame = request":
                    req = resident.decode_request(data[4:])
                    self.assertEqual(data, resident.encode_request(req))
                    self.assertIn(f"taskId = {req.task_id}", want)
                    self.assertIn(f"argv.count = {len(req.argv)}", want)
                    self.assertIn(f"env.count = {len(req.env)}", want)
                else:
                    task, code, out, err = resident.decode_response(data[4:])
                    self.assertEqual(data, resident.encode_response(task, code, out, err))
                    self.assertIn(f"exitCode = {code}", want)
                    for cut in range(len(data) - 4):
                        with self.assertRaises(wire.ProtocolError):
                            resident.decode_response(data[4:4 + cut])

    def test_the_worker_field_is_the_one_the_java_client_writes(self):
        task = wire.decode((VECTORS / "42_dispatch_worker.bin").read_bytes())["tasks"][0]
        self.assertEqual(wire.worker_ext(["python3", "-m", "falkon.parsl.worker", "resident"], b"\x80\x04K."),
                         task["spec"]["ext"])
        self.assertEqual([], wire.worker_ext())
        for bad in ({"command": []}, {"command": "python3"}, {"command": [""]}, {"payload": b"x"},
                    {"command": ["w"], "payload": "text"}):
            with self.assertRaises(ValueError, msg=str(bad)):
                wire.worker_ext(**bad)
