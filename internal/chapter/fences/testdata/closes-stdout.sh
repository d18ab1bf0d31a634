#!/bin/sh
# A hostile fence helper: it says it is ready, then closes its stdout and
# lives on, reading nothing and answering nothing.
echo "ready $$ v1"
exec >&-
exec sleep 3600
