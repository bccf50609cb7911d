#!/usr/bin/env bash
# linbench slurm --submit on a real Slurm started here on localhost (munged, slurmctld, slurmd; all
# state in a temporary directory): three CPU shards and the merge submitted, waited for, and the
# merge compared with an unsharded sweep (slurm_result_check). The node has three stand-in GPUs so
# --gres=gpu:1 is scheduled as written. Slurm is installed when missing (root with apt-get); else
# skip (77), saying why. Whatever happens, the jobs are cancelled and waited for (they outlive a
# stopped slurmd), the daemons stopped by their process ids and the directory removed.
# Usage: test_slurm_real.sh LINBENCH SLURM_RESULT_CHECK
set -u
bin=$(realpath "$1")
check=$(realpath "$2")
export PATH="/usr/sbin:/sbin:$PATH" # the daemons live in sbin, outside a user's PATH

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}

# --- Slurm installed, or installed now -------------------------------------------------------
packages="slurmctld slurmd slurm-client munge"
have_slurm() {
  for c in slurmctld slurmd sbatch squeue scontrol scancel munged mungekey setpriv; do
    command -v "$c" >/dev/null 2>&1 || return 1
  done
  getent passwd munge >/dev/null
}
if ! have_slurm; then
  [ "$(id -u)" -eq 0 ] || skip "Slurm is not installed ($packages) and this is not root, so it cannot be installed here: apt-get install $packages, or run .ci/run"
  command -v apt-get >/dev/null 2>&1 || skip "Slurm is not installed ($packages) and there is no apt-get to install it with"
  echo "installing $packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends $packages >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends $packages >/dev/null 2>&1; } ||
    skip "Slurm is not installed ($packages) and apt-get could not install it"
  have_slurm || skip "apt-get installed $packages but a command of theirs is still missing"
fi

# --- a fresh directory, and everything undone at the end ---------------------------------------
tmp=$(mktemp -d /tmp/lb-slurm-real-XXXXXX) || fail "mktemp"
chmod 755 "$tmp" # munged runs as munge and must reach its directory
jobs_submitted=""
daemons=""
cleanup() {
  local rc=$?
  if [ -n "$jobs_submitted" ]; then
    # shellcheck disable=SC2086
    scancel $jobs_submitted 2>/dev/null
    for _ in $(seq 1 60); do
      [ -z "$(squeue -h -j "${jobs_submitted// /,}" 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  for pid in $daemons; do # slurmd, slurmctld, munged: the last started stops first
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    for log in "$tmp"/*.log "$tmp"/run/slurm-*.out; do
      [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# waits up to $1 seconds for the command after it to succeed
wait_for() {
  local limit=$1
  shift
  for _ in $(seq 1 $((limit * 5))); do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}

# --- munge: its own key, socket and state, run as the munge user -------------------------------
mkdir -p "$tmp/munge"
mungekey -c -k "$tmp/munge/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 755 "$tmp/munge" # munged: its socket reachable by all
chmod 600 "$tmp/munge/munge.key"
chown -R munge: "$tmp/munge"
socket="$tmp/munge/munge.socket"
setpriv --reuid=munge --regid="$(id -g munge)" --init-groups \
  munged -F --socket="$socket" --key-file="$tmp/munge/munge.key" --pid-file="$tmp/munge/munged.pid" \
  --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" >"$tmp/munged.log" 2>&1 &
daemons="$! $daemons"
wait_for 10 test -S "$socket" || fail "munged did not start: $(cat "$tmp/munged.log" "$tmp/munge/munged.log" 2>/dev/null)"

# --- slurm.conf: one node, localhost, no larger than this machine -------------------------------
read -r cpus boards sockets cores threads memory < <(slurmd -C | awk '/^NodeName/ {
  for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  print v["CPUs"], v["Boards"], v["SocketsPerBoard"], v["CoresPerSocket"], v["ThreadsPerCore"], v["RealMemory"] }')
[ -n "$memory" ] || fail "slurmd -C printed no node line"
port=$((20000 + 2 * (RANDOM % 10000))) # two ports, away from another run's
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/run"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=linbench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus Boards=$boards SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=$memory Gres=gpu:3 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
# Slurm drops GPUs without device files; three stand-ins (/dev/null's numbers) make them count.
mkdir -p "$tmp/dev"
for i in 0 1 2; do
  mknod "$tmp/dev/gpu$i" c 1 3 2>/dev/null || : >"$tmp/dev/gpu$i"
done
echo "NodeName=localhost Name=gpu File=$tmp/dev/gpu[0-2]" >"$tmp/gres.conf"

slurmctld -D -i >"$tmp/slurmctld.out" 2>&1 &
daemons="$! $daemons"
wait_for 30 scontrol ping >/dev/null 2>&1 || fail "slurmctld did not answer scontrol ping"
slurmd -D -N localhost >"$tmp/slurmd.out" 2>&1 &
daemons="$! $daemons"
node_idle() { [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ]; }
wait_for 60 node_idle || fail "node localhost not idle: $(sinfo -h -n localhost -o '%T %E' 2>&1)"
sinfo

# --- the sharded sweep through Slurm, and the same sweep unsharded ---------------------------
flags=(--device cpu --layers 1 --d-model 32 --heads 2 --ffn 64 --vocab 100 --n 32,64 --k 8,16
  --mem-limit 4M --cell-time 1 --no-check -q)
cd "$tmp/run" || fail "cd"
echo "\$ linbench slurm ${flags[*]} --shards 3 --out $tmp/run --submit"
out=$("$bin" slurm "${flags[@]}" --shards 3 --out "$tmp/run" --submit 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "linbench slurm --submit exited $rc"
ids=$(echo "$out" | sed -n 's/^sweep: job \([0-9]*\); merge: Submitted batch job \([0-9]*\)$/\1 \2/p')
read -r array merge <<<"$ids"
[ -n "${merge:-}" ] || fail "no job ids in linbench slurm's output"
jobs_submitted="$array $merge"
echo "--- squeue after submission"
squeue -o '%.10i %.16j %.8T %.10r %E'

start=$SECONDS
done_jobs() { [ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ]; }
seen=""
while ! done_jobs; do
  now=$(squeue -h -j "$array,$merge" -o '%i %T' 2>/dev/null | tr '\n' ' ')
  [ "$now" != "$seen" ] && echo "squeue at $((SECONDS - start)) s: $now"
  seen=$now
  [ $((SECONDS - start)) -lt 300 ] || fail "the jobs did not finish in 300 s: $now"
  squeue -h -j "$merge" -o %r 2>/dev/null | grep -q DependencyNeverSatisfied &&
    fail "the merge job will never run: an array task failed"
  sleep 1
done
echo "all jobs left the queue after $((SECONDS - start)) s"
echo "--- the jobs as slurmctld recorded them"
states=$(scontrol -o show job "$array" 2>/dev/null; scontrol -o show job "$merge" 2>/dev/null)
echo "$states" | grep -o 'JobId=[0-9]* \(ArrayJobId=[0-9]* ArrayTaskId=[0-9]* \)\?JobName=[^ ]*\|JobState=[A-Z]*\|ExitCode=[0-9:]*\|Dependency=[^ ]*' |
  paste -d' ' - - - - 2>/dev/null
tasks=$(echo "$states" | grep -c "JobName=linbench-sweep .*JobState=COMPLETED .*ExitCode=0:0")
[ "$tasks" -eq 3 ] || fail "$tasks of the 3 array tasks completed with exit 0"
echo "$states" | grep -q "JobId=$merge .*JobState=COMPLETED .*ExitCode=0:0" || fail "the merge job did not complete with exit 0"

echo "--- the merged result ($tmp/run/merged)"
cat "$tmp/run/merged/raw.csv" "$tmp/run/merged/meta.csv"
"$bin" sweep "${flags[@]}" --out "$tmp/whole" || fail "the unsharded sweep failed"
"$check" "$tmp/run/merged" "$tmp/whole" 3 || fail "the merged result differs from the unsharded sweep"
echo "test_slurm_real: the Slurm run's merge equals the unsharded sweep"
