"""Device arguments in a call (creation ops' ``device=``) follow the tensors to the device under test."""

from __future__ import annotations

import torch

from evaluation.catalog.spec import Call
from evaluation.judge import wire
from evaluation.judge.inputs import to_device


def test_the_sandbox_decodes_a_cpu_device_argument_as_its_own_device():
    encoder = wire.Encoder()
    payload = encoder.encode({"args": [[2, 3]], "kwargs": {"device": torch.device("cpu"), "dtype": torch.float16}})
    decoded = wire.Decoder(encoder.blobs, device="meta").decode(payload)
    assert decoded["kwargs"] == {"device": torch.device("meta"), "dtype": torch.float16}


def test_the_trusted_side_places_device_arguments_with_the_tensors():
    call = Call(args=[torch.ones(2, 3)], kwargs={"device": torch.device("cpu"), "sizes": [(torch.device("cpu"),)]})
    placed = to_device(call, torch.device("meta"))
    assert placed.args[0].device == torch.device("meta") and placed.args[0].shape == (2, 3)
    assert placed.kwargs == {"device": torch.device("meta"), "sizes": [(torch.device("meta"),)]}
