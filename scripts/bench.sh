#!/usr/bin/env bash
# Runs the benchmarks of every package that has some, with allocations, then sums up the figures
# docs/design.md sets targets for: devicectl next to its floor (a bare client on the same WebSocket
# library, measured in the same run), their ratio, the target, and whether it was met. devicectl's
# figures lead with the path a board's calls take (simulated parts that count as real ones), the
# instant parts of --hardware sim beside them. Nothing here sets GOGC: every side runs with the
# environment make bench was given.
# BENCH narrows them (a -bench regexp, default .); BENCHTIME sets -benchtime. The process-level
# benchmarks (internal/testing/benchproc) do a minimum of rounds whatever BENCHTIME says, and an Nx
# BENCHTIME runs them N rounds. internal/testing/benchserve runs devicectl serve and a devicectl swarm
# (the load generator) as two processes: tasks/s at 8, 64 and 256 callers, serve's CPU per task
# and RSS per device at 1,000 and 16,000 devices (about 4 minutes; BENCH='^BenchmarkServe(Tasks|RSS)'
# runs only those). Missed targets are reported, not failed: the machine may be busy.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
mapfile -t pkgs < <(grep -rl --include='*_test.go' --exclude-dir=.git --exclude-dir=testdata '^func Benchmark' . |
	xargs -r -n1 dirname | sort -u)
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "no benchmarks"
	exit 0
fi
args=(-run '^$' -bench "${BENCH:-.}" -benchmem)
if [ -n "${BENCHTIME:-}" ]; then
	args+=(-benchtime "$BENCHTIME")
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$GO" test "${args[@]}" "${pkgs[@]}" | tee "$out" || status=$?

# summary: the table. Each benchmark line is a name, N, then value-unit pairs; the last line of a
# benchmark wins. Ratios are devicectl's figure over the floor's, whatever the figure is.
summary() {
	awk -v TASKCALLERS="8 64 256" '
	/^goarch:/ { arch = $2 }
	/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name)
		for (i = 3; i + 1 <= NF; i += 2) v[name, $(i + 1)] = $i
	}
	function has(b, u) { return (b, u) in v }
	function line(metric, dev, floor, ratio, target, status) {
		printf "%-40s %12s %12s %10s %-24s %s\n", metric, dev, floor, ratio, target, status
	}
	function notrun(metric, target) { line(metric, "-", "-", "-", target, "not run") }
	function verdict(ok) { return ok ? "met" : "MISSED" }
	# a latency percentile of a round-trip benchmark, in microseconds
	function latency(b, p, metric, target, limit,   r) {
		if (!has(b, p "-ns")) { notrun(metric, target); return }
		r = v[b, p "-x-floor"]
		line(metric, sprintf("%.1f", v[b, p "-ns"] / 1e3),
			sprintf("%.1f", v[b, "floor-" p "-ns"] / 1e3), sprintf("%.2fx", r), target,
			limit ? verdict(r <= limit) : "-")
	}
	# a rate from an in-process benchmark: ops/s against the floor time per op
	function rate(b, metric, target, kind, limit,   d, f) {
		if (!has(b, "ops/s")) { notrun(metric, target); return }
		d = v[b, "ops/s"]; f = 1e9 / v[b, "floor-ns/op"]
		line(metric, sprintf("%.0f", d), sprintf("%.0f", f), sprintf("%.2fx", d / f), target,
			verdict(kind == "ratio" ? d / f >= limit : d >= limit))
	}
	# a figure of a process-level benchmark for one devicectl side (prefix "" for the path of a
	# board, "inline-"), with its floor- twin and the ratio; status is the verdict, "" for none
	function proc(b, pre, u, ru, metric, format, target, status) {
		if (!has(b, pre u)) { notrun(metric, target); return }
		line(metric, sprintf(format, v[b, pre u]), sprintf(format, v[b, "floor-" u]),
			sprintf("%.2fx", v[b, pre ru]), target, status == "" ? "-" : status)
	}
	# the peak RSS verdict: under limit MB and within ratio of the floor
	function rss(b, pre, limit, ratio) {
		if (!has(b, pre "loaded-MB")) return ""
		return verdict(v[b, pre "loaded-MB"] <= limit && v[b, pre "loaded-x-floor"] <= ratio)
	}
	END {
		print ""
		print "devicectl next to the floor (ratio: devicectl / floor), against docs/design.md. \"board\":"
		print "parts that count as real ones (--sim-latency 0s), whose calls take the path of a board;"
		print "\"inline\": the instant parts of --hardware sim, which no board has."
		line("metric", "devicectl", "floor", "ratio", "target", "met?")
		rt = "BenchmarkExecuteRoundTrip"
		latency(rt, "p50", "execute round trip p50 (us), board", "<= 1.15x floor", 1.15)
		latency(rt "Inline", "p50", "execute round trip p50 (us), inline", "<= 1.15x floor", 1.15)
		latency(rt, "p99", "execute round trip p99 (us), board", "(none)", 0)
		latency(rt "Inline", "p99", "execute round trip p99 (us), inline", "(none)", 0)
		rate("BenchmarkExecutePipelined", "pipelined executes/s, board", ">= 0.85x floor", "ratio", 0.85)
		rate("BenchmarkExecutePipelinedInline", "pipelined executes/s, inline", ">= 0.85x floor", "ratio", 0.85)
		b = "BenchmarkProcessRSS"
		proc(b, "", "execs/s", "rate-x-floor", "pipelined executes/s, process, board", "%.0f", ">= 0.85x floor",
			has(b, "rate-x-floor") ? verdict(v[b, "rate-x-floor"] >= 0.85) : "")
		proc(b, "inline-", "execs/s", "rate-x-floor", "pipelined executes/s, process, inline", "%.0f", ">= 0.85x floor",
			has(b, "inline-rate-x-floor") ? verdict(v[b, "inline-rate-x-floor"] >= 0.85) : "")
		rate("BenchmarkRenderChunks", "rendered chunks/s to a pipe", ">= 100000/s", "abs", 100000)
		proc(b, "", "idle-MB", "idle-x-floor", "idle RSS (MB), board", "%.1f", "(none)", "")
		proc(b, "inline-", "idle-MB", "idle-x-floor", "idle RSS (MB), inline", "%.1f", "(none)", "")
		proc(b, "", "loaded-MB", "loaded-x-floor", "peak RSS over 100k calls (MB), board", "%.1f",
			"<= 14 MB, <= 1.15x floor", rss(b, "", 14, 1.15))
		proc(b, "inline-", "loaded-MB", "loaded-x-floor", "peak RSS over 100k calls (MB), inline", "%.1f",
			"<= 14 MB, <= 1.15x floor", rss(b, "inline-", 14, 1.15))
		b = "BenchmarkProcessStart"
		proc(b, "", "start-ms", "start-x-floor", "start to registered (ms)", "%.1f", "<= 50 ms amd64",
			!has(b, "start-ms") ? "" : arch != "amd64" ? "n/a (" arch ")" : verdict(v[b, "start-ms"] <= 50))
		print ""
		print "the agent server (agent/server), against docs/design.md:"
		line("metric", "measured", "", "", "target", "met?")
		agent("BenchmarkAgentTurn", "turn-p50-ns", "rule-planner turn p50 (ms)", 1e6, "<= 5 ms", 5)
		agent("BenchmarkAgentTurn", "turn-p99-ns", "rule-planner turn p99 (ms)", 1e6, "(none)", 0)
		agent("BenchmarkA2ASend", "send-p50-ns", "A2A message/send p50 (ms)", 1e6, "<= 10 ms", 10)
		agent("BenchmarkA2ASend", "send-p99-ns", "A2A message/send p99 (ms)", 1e6, "(none)", 0)
		agent("BenchmarkServeDevicesRSS", "KiB/device", "serve RSS per device, 1,000 (KiB)", 1, "<= 100 KiB", 100)
		agent("BenchmarkServeDevicesRSS", "idle-KiB", "serve RSS, no device (KiB)", 1, "(none)", 0)
		print ""
		print "serve under load (internal/testing/benchserve: serve, and a swarm of 100 devices sending seed"
		print "tasks/send open loop faster than serve answers, in two processes on this machine):"
		line("metric", "measured", "", "", "target", "met?")
		split(TASKCALLERS, cs, " ")
		for (i = 1; i in cs; i++) {
			b = "BenchmarkServeTasks/callers=" cs[i]
			floor_("tasks/s, " cs[i] " callers", b, "tasks/s", 1, ">= 1500/s", 1500)
			agent(b, "serve-cpu-ms/task", "serve CPU per task, " cs[i] " callers (ms)", 1, "<= 0.3 ms", 0.3)
			agent(b, "p50-ms", "task p50, " cs[i] " callers (ms)", 1, "(none)", 0)
			agent(b, "p99-ms", "task p99, " cs[i] " callers (ms)", 1, "(none)", 0)
			agent(b, "failed", "tasks failed, " cs[i] " callers", 1, "0", 0.5)
		}
		lo = "BenchmarkServeTasks/callers=" cs[1]; hi = "BenchmarkServeTasks/callers=" cs[i - 1]
		if (has(lo, "tasks/s") && has(hi, "tasks/s") && v[lo, "tasks/s"] > 0) {
			r = v[hi, "tasks/s"] / v[lo, "tasks/s"]
			line("tasks/s at " cs[i - 1] " / at " cs[1] " callers", sprintf("%.2fx", r), "", "", "> 1x (grows)", verdict(r > 1))
		} else {
			notrun("tasks/s at " cs[i - 1] " / at " cs[1] " callers", "> 1x (grows)")
		}
		b = "BenchmarkServeTasks/a2a-callers=8"
		agent(b, "tasks/s", "A2A SendMessage tasks/s, 8 callers", 1, "(none)", 0)
		agent(b, "serve-cpu-ms/task", "A2A serve CPU per task, 8 callers (ms)", 1, "<= 0.3 ms", 0.3)
		b = "BenchmarkServeRSSPerDevice"
		agent(b, "idle-KiB", "serve RSS, no device (KiB)", 1, "(none)", 0)
		agent(b, "KiB/device-1k", "serve RSS per device, 1,000 (KiB)", 1, "(none)", 0)
		agent(b, "KiB/device-16k", "serve RSS per device, 16,000 (KiB)", 1, "<= 48 KiB", 48)
		agent(b, "register-15k-s", "15,000 more devices registered (s)", 1, "(none)", 0)
	}
	# a figure that must reach a floor: value / div against a lower limit
	function floor_(metric, b, u, div, target, limit,   d) {
		if (!has(b, u)) { notrun(metric, target); return }
		d = v[b, u] / div
		line(metric, sprintf("%.0f", d), "", "", target, verdict(d >= limit))
	}
	# an agent figure: value / div against an upper limit (0: no target)
	function agent(b, u, metric, div, target, limit,   d) {
		if (!has(b, u)) { notrun(metric, target); return }
		d = v[b, u] / div
		line(metric, sprintf("%.2f", d), "", "", target, limit ? verdict(d <= limit) : "-")
	}' "$1"
}
summary "$out"

# voice_bench: the voice loop end to end (cmd/devicectl TestVoiceBench): flite speaks 20 commands
# in two voices into a private PulseAudio null sink that is devicectl run's microphone; serve
# transcribes with pocketsphinx and its grammar. It prints the share that led to the right action
# (target >= 19/20 per voice) and the latency from the utterance's last sample to the reply's first
# sample at the speaker (target p50 <= 1 s), with each stage. VOICE_BENCH=0 skips it.
voice_bench() {
	local prog missing=()
	for prog in pocketsphinx_continuous flite sox pulseaudio pactl paplay parec espeak-ng; do
		command -v "$prog" >/dev/null || missing+=("$prog")
	done
	echo ""
	echo "voice in, end to end (cmd/devicectl TestVoiceBench), against VOICE.md:"
	if [ ${#missing[@]} -gt 0 ]; then
		echo "not run: ${missing[*]} missing (apt-get install pocketsphinx pocketsphinx-en-us flite sox pulseaudio pulseaudio-utils espeak-ng)"
		return 0
	fi
	local vout
	vout=$(mktemp)
	DEVICECTL_VOICE_BENCH=1 "$GO" test -count=1 -timeout 20m -run '^TestVoiceBench$' -v ./cmd/devicectl >"$vout" 2>&1 || status=$?
	grep '^voice-bench: ' "$vout" | sed 's/^voice-bench: //'
	grep -E '^\s+voice_bench_test.go' "$vout" || true
	rm -f "$vout"
}
if [ "${VOICE_BENCH:-1}" != 0 ]; then
	voice_bench
fi
exit "$status"
