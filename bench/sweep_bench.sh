#!/usr/bin/env bash
# Counter-sweep benchmark: full sweeps of every linked port (CounterSweeper on the umad MAD
# engine) at several windows vs a sequential pma_query_via loop (what perfquery does), vs the
# real `ibqueryerrors`, vs a few real `perfquery -x`/`perfquery` processes, and the simulator's
# own ceiling (ClassPortInfo GETs at deep windows) — same fabric, same run.
#
#   bench/sweep_bench.sh [--repeats 3] [--rounds 5] [--windows 1,4,8,16,32,64,128,256]
#                        [--probe 512|none] [--fabrics "two-level-2048 superpod-40"] [--rt yes|no]
#
# --rt yes (the default as root): ibsim and every measured process (the loop, the ceiling, the
# sweeps, ibqueryerrors, perfquery) run under SCHED_FIFO priority 50 (chrt), so compiles or other
# jobs on the machine cannot take the cores from them; all contenders get the same treatment.
#
# Two ceilings, both ClassPortInfo GETs (the cheapest PMA query) at deep windows, as many MADs as
# one sweep sends: to the sweep's own destinations (one entry per linked port: the switch's LID
# for a switch port, the CA port's LID for an HCA port) — ibsim forwards every MAD hop by hop
# through its switches, so a MAD to a far HCA costs it more than one to a switch and only this
# ceiling is the same work as a sweep — and, for reference, round-robin over the switches only.
#
# Prints a Markdown block ready for docs/BENCHMARKS.md; raw output of every step goes to
# $work/log.txt (the path is printed). Every fabric is taken down on exit, also on failure.
# --probe runs one deeper window last on each fabric (it may wedge the simulator, so nothing is
# measured after it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
repeats=3
rounds=5
windows=1,4,8,16,32,64,128,256
ceiling_windows=32,64,128,256
probe=512
fabrics="two-level-2048 superpod-40"
rt=no
[ "$(id -u)" = 0 ] && command -v chrt >/dev/null && rt=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --windows) windows="$2"; shift 2 ;;
    --probe) probe="$2"; shift 2 ;;
    --fabrics) fabrics="$2"; shift 2 ;;
    --rt) rt="$2"; shift 2 ;;
    *) echo "usage: $0 [--repeats N] [--rounds N] [--windows LIST] [--probe W|none] [--fabrics LIST] [--rt yes|no]" >&2; exit 2 ;;
  esac
done

cli="$root/build/ibfabric"
sweep="$root/build/sweep_bench"
loop="$root/build/perfquery_loop"
for b in "$cli" "$sweep" "$loop"; do
  [ -x "$b" ] || { echo "missing $b: cmake --build build -j2 --target ibfabric sweep_bench perfquery_loop" >&2; exit 2; }
done
export IBFABRIC_SIM_DIR="${IBFABRIC_SIM_DIR:-/tmp/sims-sweepbench}"
work=$(mktemp -d /tmp/sweepbench-XXXXXX)
log="$work/log.txt"
names=()
cleanup() {
  for n in "${names[@]}"; do "$cli" sim down --name "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

gen() {
  case "$1" in
    two-level-2048) "$cli" topo gen --preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32 ;;
    superpod-40) "$cli" topo gen --preset superpod --sus 40 ;;
    superpod-8) "$cli" topo gen --preset superpod --sus 8 ;;
    *) echo "unknown fabric $1" >&2; exit 2 ;;
  esac
}
gen_cmd() {
  case "$1" in
    two-level-2048) echo "topo gen --preset two-level --leaves 64 --spines 32 --hosts-per-leaf 32" ;;
    superpod-40) echo "topo gen --preset superpod --sus 40" ;;
    superpod-8) echo "topo gen --preset superpod --sus 8" ;;
  esac
}

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# kv LINE KEY: the value of KEY=... in a "summary ..." line
kv() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1==k {print $2}'; }
k() { awk -v x="$1" 'BEGIN { if (x >= 100000) printf "%.0fk", x/1000; else if (x >= 10000) printf "%.1fk", x/1000; else printf "%.0f", x }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a/b; else print "-" }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f%%", 100*a/b; else print "-" }'; }
# agg FILE WINDOW FIELD: "median min max count" of FIELD over the "round" lines (of WINDOW)
agg() {
  grep -E '^ *round ' "$1" | awk -v w="$2" -v f="$3" '{
      ok = (w == ""); v = ""
      for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == "window" && a[2] == w) ok = 1; if (a[1] == f) v = a[2] }
      if (ok && v != "") print v }' | sort -g |
    awk '{a[NR]=$1} END { if (NR == 0) { print "0 0 0 0"; exit }
      m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; print m, a[1], a[NR], NR }'
}
# dsum FILE WINDOW FIELD: sum of FIELD over the "done window=WINDOW" lines
dsum() {
  grep -E "^ *done window=$2 " "$1" | tr ' ' '\n' | awk -F= -v f="$3" '$1==f {s+=$2} END {print s+0}'
}
prio=()
[ "$rt" = yes ] && prio=(chrt -f 50)
run() { "$cli" sim run --name "$name" --timeout 900 -- "${prio[@]}" "$@"; }

echo "### Counter sweep — $(date -u +%Y-%m-%d\ %H:%M) UTC, $(nproc) cores, host $(hostname)"
echo
echo "Command: \`bench/sweep_bench.sh --repeats $repeats --rounds $rounds --windows $windows --probe $probe --fabrics \"$fabrics\" --rt $rt\`"
echo "(raw log: $log)"
echo
for f in $fabrics; do
  name="sweepbench-$f-$$"
  net="$work/$f.net"
  gen "$f" > "$net"
  names+=("$name")
  t0=$(now)
  "$cli" sim up "$net" --name "$name" --timeout 300 >>"$log" 2>&1
  up_s=$(echo "$(now) - $t0" | bc)
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "== $f up in $up_s s, load $load_before" >>"$log"
  if [ "$rt" = yes ]; then
    ibsim_pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ibsim"]["pid"])' "$IBFABRIC_SIM_DIR/$name/state.json")
    chrt -f -p 50 "$ibsim_pid"
  fi

  # sim run's own attach cost (subtracted from the real tools' wall times below)
  att=""
  for i in 1 2 3; do t0=$(now); run true; att+="$(echo "$(now) - $t0" | bc) "; done
  attach=$(echo "$att" | tr ' ' '\n' | grep . | median)

  # Interleaved: each repeat runs the loop, the ceiling and every sweep window once, so every
  # configuration samples the same (shared, noisy) machine conditions.
  : >"$work/loop.txt"; : >"$work/ceil.txt"; : >"$work/ceilsw.txt"; : >"$work/sweep.txt"
  iq=""
  iq_ports=0
  hung=""
  for rep in $(seq 1 "$repeats"); do
    echo "-- repeat $rep: perfquery_loop, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
    run "$loop" --rounds "$rounds" >>"$work/loop.txt" 2>&1 || echo "perfquery_loop status $?" >>"$log"
    echo "-- repeat $rep: ceiling" >>"$log"
    run "$sweep" --ceiling --ceiling-targets swept --windows "$ceiling_windows" --rounds "$rounds" >>"$work/ceil.txt" 2>&1 || echo "ceiling status $?" >>"$log"
    run "$sweep" --ceiling --ceiling-targets switches --windows "$ceiling_windows" --rounds "$rounds" >>"$work/ceilsw.txt" 2>&1 || echo "switch ceiling status $?" >>"$log"
    echo "-- repeat $rep: sweeps" >>"$log"
    run "$sweep" --windows "$windows" --rounds "$rounds" >>"$work/sweep.txt" 2>&1 || echo "sweep status $?" >>"$log"
    echo "-- repeat $rep: ibqueryerrors" >>"$log"
    t0=$(now)
    run ibqueryerrors >"$work/iqe.txt" 2>&1 || true
    iq+="$(echo "$(now) - $t0 - $attach" | bc) "
    iq_ports=$(grep -oE '[0-9]+ ports checked' "$work/iqe.txt" | grep -oE '^[0-9]+' || echo 0)
    tail -4 "$work/iqe.txt" >>"$log"
    if grep -q '^  hung' "$work/sweep.txt" "$work/ceil.txt" "$work/ceilsw.txt"; then hung=1; break; fi
  done
  cat "$work/loop.txt" "$work/ceil.txt" "$work/ceilsw.txt" "$work/sweep.txt" >>"$log"
  iq_med=$(echo "$iq" | tr ' ' '\n' | grep . | median)
  iq_min=$(echo "$iq" | tr ' ' '\n' | grep . | sort -g | head -1)
  iq_max=$(echo "$iq" | tr ' ' '\n' | grep . | sort -g | tail -1)

  pq_n=20
  pq_s=0
  [ -n "$hung" ] && probe=none
  [ -n "$hung" ] || {
  echo "-- perfquery processes" >>"$log"
  pq_s=$(run bash -c "t0=\$(date +%s.%N); for i in \$(seq 1 $pq_n); do perfquery -x >/dev/null && perfquery >/dev/null || exit 1; done; echo \"\$(date +%s.%N) - \$t0\" | bc" 2>>"$log" || echo 0)
  echo "perfquery pairs: $pq_n in $pq_s s" >>"$log"
  }

  probe_note="not run"
  if [ "$probe" != none ]; then
    echo "-- probe window $probe" >>"$log"
    run "$sweep" --windows "$probe" --rounds 2 --repeats 1 --child-timeout-s 90 >"$work/probe.txt" 2>&1 || true
    cat "$work/probe.txt" >>"$log"
    if grep -q '^  hung' "$work/probe.txt"; then
      probe_note="**hung** (child stuck, killed after 90 s)"
    else
      p=$(grep '^summary' "$work/probe.txt" || true)
      probe_note="completed: $(k "$(kv "$p" ports_per_s_median)") ports/s, $(k "$(kv "$p" mads_per_s_median)") MADs/s, timeouts $(kv "$p" timeouts), failed $(kv "$p" failed)"
    fi
  fi
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  "$cli" sim down --name "$name" >>"$log" 2>&1 || true

  ports=$(grep -m1 '^crawl' "$work/loop.txt" | tr ' ' '\n' | awk -F= '$1=="ports" {print $2}')
  read -r loop_pps loop_pps_min loop_pps_max n_loop < <(agg "$work/loop.txt" "" ports_per_s)
  read -r loop_mps loop_mps_min loop_mps_max n_loop < <(agg "$work/loop.txt" "" mads_per_s)
  read -r loop_s _ _ _ < <(agg "$work/loop.txt" "" seconds)
  ceil=0
  for w in ${ceiling_windows//,/ }; do
    read -r c _ _ _ < <(agg "$work/ceil.txt" "$w" mads_per_s)
    ceil=$(awk -v a="$ceil" -v b="$c" 'BEGIN { print (b > a ? b : a) }')
  done
  ceilsw=0
  for w in ${ceiling_windows//,/ }; do
    read -r c _ _ _ < <(agg "$work/ceilsw.txt" "$w" mads_per_s)
    ceilsw=$(awk -v a="$ceilsw" -v b="$c" 'BEGIN { print (b > a ? b : a) }')
  done
  nodes=$(grep -cE '^(Switch|Ca|Hca)' "$net")

  echo "#### $f ($nodes nodes, $ports linked ports; \`ibfabric $(gen_cmd "$f")\`)"
  echo
  echo "sim up $(printf %.1f "$up_s") s; load average before $load_before, after $load_after; sim run attach $(printf %.3f "$attach") s (subtracted from ibqueryerrors)."
  echo
  echo "| what | window | ports/s median (min–max) | MADs/s median (min–max) | s per sweep (median) | samples | vs loop (ports/s) | % of ceiling (MADs/s) | % of switch-only ceiling | timeouts / retries / failed |"
  echo "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
  echo "| pma_query_via loop (PCE + PC per port, sequential) | 1 | $(k "$loop_pps") ($(k "$loop_pps_min")–$(k "$loop_pps_max")) | $(k "$loop_mps") ($(k "$loop_mps_min")–$(k "$loop_mps_max")) | $(printf %.3f "$loop_s") | $n_loop | 1.0x | $(pct "$loop_mps" "$ceil") | $(pct "$loop_mps" "$ceilsw") | - |"
  for w in ${windows//,/ }; do
    if grep -q "^  hung window=$w:" "$work/sweep.txt"; then
      echo "| ibfabric sweep | $w | **hung** (child killed) | | | | | | | |"
      break
    fi
    read -r pps ppsmin ppsmax n < <(agg "$work/sweep.txt" "$w" ports_per_s)
    read -r mps mpsmin mpsmax n < <(agg "$work/sweep.txt" "$w" mads_per_s)
    read -r sec _ _ _ < <(agg "$work/sweep.txt" "$w" seconds)
    [ "$n" = 0 ] && continue
    echo "| ibfabric sweep | $w | $(k "$pps") ($(k "$ppsmin")–$(k "$ppsmax")) | $(k "$mps") ($(k "$mpsmin")–$(k "$mpsmax")) | $(printf %.3f "$sec") | $n | $(ratio "$pps" "$loop_pps") | $(pct "$mps" "$ceil") | $(pct "$mps" "$ceilsw") | $(dsum "$work/sweep.txt" "$w" timeouts) / $(dsum "$work/sweep.txt" "$w" retries) / $(dsum "$work/sweep.txt" "$w" failed) |"
  done
  iq_pps=$(awk -v p="$iq_ports" -v s="$iq_med" 'BEGIN { if (s > 0) print p/s; else print 0 }')
  echo "| ibqueryerrors (its own crawl + PortCounters; $iq_ports ports checked) | - | $(k "$iq_pps") | - | $(printf %.3f "$iq_med") ($(printf %.3f "$iq_min")–$(printf %.3f "$iq_max")) | $(echo "$iq" | wc -w) | $(ratio "$iq_pps" "$loop_pps") | - | - | - |"
  if [ "$pq_s" != 0 ]; then
    pq_port=$(awk -v s="$pq_s" -v n="$pq_n" 'BEGIN { print s/n }')
    echo "| \`perfquery -x\` + \`perfquery\` processes ($pq_n pairs, extrapolated) | 1 | $(k "$(awk -v x="$pq_port" 'BEGIN{print 1/x}')") | - | $(printf %.1f "$(awk -v x="$pq_port" -v p="$ports" 'BEGIN{print x*p}')") | $pq_n | $(ratio "$(awk -v x="$pq_port" 'BEGIN{print 1/x}')" "$loop_pps") | - | - | - |"
  fi
  for spec in "ceil.txt|the sweep's own destinations (one per linked port)" "ceilsw.txt|round-robin over the switches only"; do
    file=${spec%%|*}; what=${spec#*|}
    for w in ${ceiling_windows//,/ }; do
      read -r mps mpsmin mpsmax n < <(agg "$work/$file" "$w" mads_per_s)
      [ "$n" = 0 ] && continue
      echo "| ceiling: PMA ClassPortInfo GETs to $what | $w | - | $(k "$mps") ($(k "$mpsmin")–$(k "$mpsmax")) | - | $n | - | $(pct "$mps" "$ceil") | $(pct "$mps" "$ceilsw") | $(dsum "$work/$file" "$w" timeouts) / $(dsum "$work/$file" "$w" retries) / $(dsum "$work/$file" "$w" failed) |"
    done
  done
  echo
  echo "Probe window $probe: $probe_note."
  echo
done
echo "Each of $repeats repeats runs, in this order, the loop ($rounds rounds in one process), the ceiling and every sweep window ($rounds timed sweeps each, one child process per window that crawls, then runs one untimed warm-up sweep which also reads ClassPortInfo), then ibqueryerrors; medians and ranges are over all timed rounds. The loop pays no process start-up and sends no ClassPortInfo per port (real perfquery does both). Ceiling = best median of the ClassPortInfo runs to the sweep's own destinations (windows $ceiling_windows), as many MADs per run as one sweep sends; the switch-only ceiling is the same over the switches' LIDs. Scheduling: $([ "$rt" = yes ] && echo "ibsim and every measured process under SCHED_FIFO 50 (chrt)" || echo "default (no real-time priority)")."
