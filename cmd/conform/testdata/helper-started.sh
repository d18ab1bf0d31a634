#!/bin/sh
# A fence helper that tells the test it has started, through the FIFO its
# first argument names, then never says it is ready: its row waits on it
# until the row ends.
echo started > "$1"
exec sleep 3600
