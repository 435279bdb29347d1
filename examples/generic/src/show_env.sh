#!/bin/sh
# Prints who this task is, where its peers are, and the task variables tony
# sets (doc/task-environment.md). Fails if the essential ones are missing.
set -eu
for name in JOB_NAME TASK_INDEX TASK_NUM IS_CHIEF CLUSTER_SPEC; do
  eval "value=\${$name:-}"
  if [ -z "$value" ]; then
    echo "generic example FAILED: $name is not set; run this through tony" >&2
    exit 1
  fi
done
echo "$GREETING: I am $JOB_NAME:$TASK_INDEX of $TASK_NUM (chief: $IS_CHIEF) on $(hostname)"
echo "working directory: $(pwd)"
echo "cluster: $CLUSTER_SPEC"
echo "task variables:"
env | grep -E '^(JOB_NAME|TASK_INDEX|TASK_NUM|IS_CHIEF|CLUSTER_SPEC|TONY_|DTF_)' | sort | sed 's/^/  /'
echo "generic example OK: $JOB_NAME:$TASK_INDEX"
