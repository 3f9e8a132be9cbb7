#!/bin/bash
# The BTL's 4 hosts x 2 ranks section on its own bed (tests/run boots 4 guests
# for it): same-host pairs go over the device too.
BTL_ONLY=4x2 exec bash "$(dirname "$0")/btl.sh"
