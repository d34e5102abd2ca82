"""What a tensor costs to cross the judge's pipe (evaluation/judge/wire.py), against the bare pipe.

    .venv/bin/python scripts/bench_wire.py [--sizes-mb 1,16,64,256] [--repeats 5]

Per size: one float32 tensor encoded, framed and sent by this process, received and decoded by a forked
one, which then answers one byte; against the same number of bytes written and read with no encoding, over
the same pipe, in the same run (the baseline). Two receivers: ``reply`` (decoded once on the received buffer,
as the trusted side decodes the sandbox's replies) and ``call`` (a private copy, as the sandbox decodes a call
it replays). Prints medians and the ratio to the bare pipe: 1.0 would mean the wire adds nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.judge import wire  # noqa: E402


def _receiver(data_read: int, ack_write: int, mode: str) -> None:
    while True:
        header, blobs = wire.receive(data_read, max_blob_bytes=1 << 40)
        if header.get("op") == "exit":
            return
        if mode == "bare":
            pass  # the bytes are read: nothing to build
        else:
            decoded = wire.Decoder(blobs, private=(mode == "call")).decode(header["payload"])
            assert decoded.numel() > 0
        os.write(ack_write, b"!")


class Channel:
    """A forked receiver in one ``mode`` and the pipes to it."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        data_read, self.data_write = os.pipe()
        self.ack_read, ack_write = os.pipe()
        wire.widen_pipe(self.data_write)
        self.child = os.fork()
        if self.child == 0:
            os.close(self.data_write)
            os.close(self.ack_read)
            try:
                _receiver(data_read, ack_write, mode)
            finally:
                os._exit(0)
        os.close(data_read)
        os.close(ack_write)

    def transfer(self, tensor: torch.Tensor) -> float:
        started = time.perf_counter()
        if self.mode == "bare":
            wire.send(self.data_write, {"op": "data"}, [memoryview(tensor.numpy()).cast("B")])
        else:
            encoder = wire.Encoder()
            wire.send(self.data_write, {"op": "data", "payload": encoder.encode(tensor)}, encoder.blobs)
        os.read(self.ack_read, 1)
        return time.perf_counter() - started

    def close(self) -> None:
        wire.send(self.data_write, {"op": "exit"})
        os.waitpid(self.child, 0)
        os.close(self.data_write)
        os.close(self.ack_read)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="1,16,64,256")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'size':>8} {'bare pipe':>12} {'reply':>12} {'x bare':>7} {'call':>12} {'x bare':>7}")
    channels = {mode: Channel(mode) for mode in ("bare", "reply", "call")}
    try:
        for size_mb in (int(item) for item in args.sizes_mb.split(",")):
            tensor = torch.rand(size_mb * (1 << 20) // 4)
            seconds: dict[str, list[float]] = {mode: [] for mode in channels}
            for round_index in range(args.repeats + 1):  # rounds interleave the modes; the first is a warm-up
                for mode, channel in channels.items():
                    elapsed = channel.transfer(tensor)
                    if round_index:
                        seconds[mode].append(elapsed)
            medians = {mode: statistics.median(values) for mode, values in seconds.items()}
            rate = {mode: size_mb / 1024 / value for mode, value in medians.items()}
            print(
                f"{size_mb:>6}MB {medians['bare'] * 1e3:>8.1f} ms {medians['reply'] * 1e3:>8.1f} ms "
                f"{medians['reply'] / medians['bare']:>7.2f} {medians['call'] * 1e3:>8.1f} ms "
                f"{medians['call'] / medians['bare']:>7.2f}   ({rate['bare']:.2f} / {rate['reply']:.2f} / "
                f"{rate['call']:.2f} GB/s)",
                flush=True,
            )
    finally:
        for channel in channels.values():
            channel.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
