#!/usr/bin/python3
"""torchrun for Debian's python3-torch 1.13 on Python 3.11.

/usr/bin/torchrun crashes there before starting a worker: Std.from_str (the --redirects/--tee
parser in torch.distributed.elastic.multiprocessing.api) looks a value up by iterating the
IntFlag `Std`, and since Python 3.11 iterating an IntFlag yields only its single-bit members,
so "0" (Std.NONE) maps to None and the agent dies in to_map with
"'NoneType' object has no attribute 'get'". This wrapper replaces from_str with one that
converts by value, then runs torch.distributed.run.main() with the same arguments.

    /usr/bin/python3 examples/elastic/torchrun.py --nnodes=1:3 --rdzv-backend=c10d ... train.py
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api as _mp_api


def _std_from_str(cls, vm):
    if re.match(_mp_api._VALUE_REGEX, vm):
        return cls(int(vm))
    if re.match(_mp_api._MAPPING_REGEX, vm):
        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError(f"{vm} does not match: <{_mp_api._VALUE_REGEX}> or <{_mp_api._MAPPING_REGEX}>")


def main():
    _mp_api.Std.from_str = classmethod(_std_from_str)
    from torch.distributed.run import main as run_main

    sys.argv[0] = "torchrun"
    run_main()


if __name__ == "__main__":
    main()
