#!/bin/sh
# A hostile fence helper: it starts children that hold none of its pipes and
# outlive it, says it is ready, and answers every command with an error.
sleep 3600 </dev/null >/dev/null 2>&1 &
sh -c 'sleep 3600' </dev/null >/dev/null 2>&1 &
echo "ready $$ v1"
while read -r line; do
	echo "error this helper serves nothing"
done
