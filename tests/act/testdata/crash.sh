#!/bin/sh
# A replica that records its start in $1 and exits with status 1 at once: a crash loop.
echo "start $$" >> "$1"
exit 1
