#!/bin/sh
# A hostile fence helper: it says it is ready, then answers with one line
# far longer than the chapter takes, and lives on.
echo "ready $$ v1"
read -r line
head -c 1048576 /dev/zero | tr '\0' x
echo
exec sleep 3600
