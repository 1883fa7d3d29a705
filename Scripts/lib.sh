# shellcheck shell=bash
# Shared by the scripts in this folder; sourced, never run.
# Needs only bash 3.2, git, the Swift toolchain and POSIX tools.

# The chapters the manifest lists, one number per line.
kata_chapters() {
    awk -F '\t' '!/^#/ && NF >= 2 { print $1 }' Chapters/chapters.tsv
}

# Runs kata-tool (Scripts/KataTool, the curriculum's parser and checks) with the given
# arguments, building it first if needed; 2 when it cannot be built.
kata_tool() {
    local bin
    swift build --package-path Scripts/KataTool --scratch-path Scripts/KataTool/.build > /dev/null 2>&1 &&
        bin=$(swift build --package-path Scripts/KataTool --scratch-path Scripts/KataTool/.build --show-bin-path 2> /dev/null) ||
        { echo "kata-tool does not build: swift build --package-path Scripts/KataTool" >&2; return 2; }
    "$bin/kata-tool" "$@"
}

# The title of chapter $1.
kata_title() {
    awk -F '\t' -v n="$1" '!/^#/ && $1 == n { print $2 }' Chapters/chapters.tsv
}

# Whether chapter $1 lists check $2 (such as tsan) in the manifest.
kata_has_check() {
    awk -F '\t' -v n="$1" -v c="$2" '!/^#/ && $1 == n { split($3, a, ","); for (i in a) if (a[i] == c) found = 1 } END { exit !found }' Chapters/chapters.tsv
}

# A digest of everything that decides chapter $1's verdicts: its starter and solution code, its
# specs, mutants and controls, the support library and the manifest of the package (lessons and
# hints are left out). Two work trees with the same digest give the chapter the same verdicts,
# so a ten-round measurement stays good until the digest changes.
kata_chapter_digest() {
    local n=$1 files
    files=$(find "Chapters/Chapter$n" "Solutions/Chapter$n" "Tests/Chapter${n}Tests" "Tests/Mutants/Chapter$n" \
        "Tests/Controls/Chapter$n" Tests/KataTestSupport Package.swift -type f \( -name '*.swift' -o -name '*.patch' \) \
        2> /dev/null | LC_ALL=C sort)
    printf '%s\n%s\n' "$files" "$(printf '%s\n' "$files" | git hash-object --stdin-paths)" | git hash-object --stdin | cut -c1-12
}

# Whether $1 names a chapter in the manifest.
kata_is_chapter() {
    kata_chapters | grep -qx "$1"
}

# The platform this runs on, as mutant tags name it: linux or darwin.
kata_platform() {
    case $(uname -s) in Darwin) echo darwin ;; *) echo linux ;; esac
}

# Ends process $1 and every process below it. Each is stopped before its children are looked
# up, so that none can start another meanwhile, and ended after them, so that none is orphaned
# (`swift test` puts the test process in a process group of its own, and an exit test's child
# shares that group, so killing the script's group would miss them).
kata_kill_tree() {
    local child
    kill -STOP "$1" 2>/dev/null
    for child in $(pgrep -P "$1" 2>/dev/null); do
        kata_kill_tree "$child"
    done
    kill -KILL "$1" 2>/dev/null
}

# The process kata_run_bounded is waiting for; ended with its tree if this script is stopped,
# so that a grader's time-out or Ctrl-C leaves no `swift test` running.
kata_bounded_pid=""
kata_stop_bounded() {
    [ -n "$kata_bounded_pid" ] && kata_kill_tree "$kata_bounded_pid"
    kata_bounded_pid=""
}
trap 'kata_stop_bounded' EXIT
trap 'kata_stop_bounded; exit 143' TERM
trap 'kata_stop_bounded; exit 130' INT
trap 'kata_stop_bounded; exit 129' HUP

# Runs a command with output to file $2, ending it (and everything it started) after $1
# seconds. Returns the command's status, or 124 when it was ended for taking too long.
kata_run_bounded() {
    local seconds=$1 log=$2
    shift 2
    "$@" > "$log" 2>&1 &
    local pid=$! waited=0
    kata_bounded_pid=$pid
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$waited" -ge $((seconds * 10)) ]; then
            kata_stop_bounded
            wait "$pid" 2>/dev/null
            return 124
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    kata_bounded_pid=""
    wait "$pid"
}

# Prints one line per spec from a Swift Testing xunit file: verdict<TAB>suite<TAB>function.
# The verdict is pass, fail or skip.
kata_verdicts() {
    [ -f "$1" ] || return 0
    awk '
        function attribute(line, key,    value) {
            value = line
            if (!sub(".*" key "=\"", "", value)) return ""
            sub("\".*", "", value)
            return value
        }
        /<testcase / {
            suite = attribute($0, "classname"); name = attribute($0, "name"); status = "pass"
            if ($0 ~ /\/>[ \t]*$/) { print status "\t" suite "\t" name; next }
            open = 1; next
        }
        open && /<failure/ { status = "fail" }
        open && /<skipped/ { if (status == "pass") status = "skip" }
        open && /<\/testcase>/ { print status "\t" suite "\t" name; open = 0 }
    ' "$1" | sort -t "$(printf '\t')" -k2,3
}

# Seconds a whole chapter's run, and one spec's run, may take before it counts as hung;
# both stretch with KATA_TIME_SCALE, like the specs' own bounds.
kata_seconds() {
    awk -v base="$1" -v scale="${KATA_TIME_SCALE:-1}" 'BEGIN { s = base * scale; if (s < base) s = base; printf "%d\n", s }'
}

# Runs a command with its address space capped at KATA_MEMORY_MB megabytes, when that is set and
# the command is no ThreadSanitizer run (which reserves far more address space than it uses), so
# that code allocating without end fails alone instead of making a shared machine swap.
kata_capped() {
    case " $* " in
        *" --sanitize=thread "*) "$@"; return ;;
    esac
    if [ -n "${KATA_MEMORY_MB:-}" ]; then
        (ulimit -v $((KATA_MEMORY_MB * 1024)) 2> /dev/null; exec "$@")
    else
        "$@"
    fi
}

# The build folder named by a `--scratch-path X` among the arguments, or .build.
kata_scratch_of() {
    local scratch=.build
    while [ $# -gt 0 ]; do
        case $1 in
            --scratch-path) [ $# -ge 2 ] && scratch=$2; shift ;;
            --scratch-path=*) scratch=${1#--scratch-path=} ;;
        esac
        shift
    done
    printf '%s\n' "$scratch"
}

# The test program that build folder $1 holds, where the specs can run without `swift test`:
# on Linux SwiftPM links them into one executable, which starts in a tenth of the time `swift
# test --skip-build` takes to plan. Prints nothing elsewhere (macOS keeps an XCTest bundle).
# KATA_TEST_PROGRAM names a copy of that executable to run instead (verify runs one mutant's copy
# while it builds the next).
kata_test_program() {
    [ -n "${KATA_TEST_PROGRAM:-}" ] && { printf '%s\n' "$KATA_TEST_PROGRAM"; return; }
    local program=$1/debug/OperationKataPackageTests.xctest
    [ "$(kata_platform)" = linux ] && [ -f "$program" ] && [ -x "$program" ] && printf '%s\n' "$program"
}

# Runs the already built specs of chapter $1 that match KATA_SPEC_FILTER (default: the whole
# chapter) once, with the given extra `swift test` arguments (a --scratch-path among them);
# writes verdicts to $2 and appends the output to $2.log. Returns 0 when the run completed
# (whatever its verdicts), 2 when the test process crashed, 124 when it took longer than
# KATA_RUN_SECONDS or the specs' watchdog stopped it because a spec never ended.
kata_run_built() {
    local chapter=$1 out=$2 program status
    shift 2
    local xml="$out.xunit.xml" filter="${KATA_SPEC_FILTER:-Chapter${chapter}Tests\\.}"
    rm -f "$out" "$xml" "${xml%.xml}-swift-testing.xml"
    program=$(kata_test_program "$(kata_scratch_of "$@")")
    if [ -n "$program" ]; then
        KATA_CHAPTER=$chapter kata_run_bounded "${KATA_RUN_SECONDS:-$(kata_seconds 300)}" "$out.run.log" \
            kata_capped "$program" --testing-library swift-testing --filter "$filter" --xunit-output "${xml%.xml}-swift-testing.xml"
        status=$?
        # The program ends on a signal (status above 128) only when the runner itself died.
        [ "$status" -gt 128 ] && [ "$status" -ne 124 ] && echo "error: the test process exited with unexpected signal code $((status - 128))" >> "$out.run.log"
    else
        KATA_CHAPTER=$chapter kata_run_bounded "${KATA_RUN_SECONDS:-$(kata_seconds 300)}" "$out.run.log" \
            kata_capped swift test "$@" --skip-build --filter "$filter" --xunit-output "$xml"
        status=$?
    fi
    cat "$out.run.log" >> "$out.log"
    kata_verdicts "${xml%.xml}-swift-testing.xml" > "$out"
    [ "$status" -eq 124 ] && return 124
    # The specs' watchdog (Tests/KataTestSupport/Watchdog.swift) ended a run that could not end.
    grep -q "^⏱ The run was stopped:" "$out.run.log" && return 124
    # An exit test's child may crash by design; only a crash of the runner itself counts, and a
    # report cut short (the runner died while writing it) is no report.
    if [ ! -s "$out" ] || grep -qi "exited with unexpected signal" "$out.run.log" ||
        ! grep -q "</testsuites>" "${xml%.xml}-swift-testing.xml" 2> /dev/null; then
        return 2
    fi
    return 0
}

# Runs chapter $1's specs with the given extra `swift test` arguments; writes verdicts to $2
# and the log to $2.log. Only chapter $1 is built (KATA_CHAPTER), so another chapter that does
# not compile cannot stop it. Returns 0 when the run completed (whatever its verdicts), 1 when
# the build failed, 2 when the test process crashed, 124 when it timed out.
kata_run_chapter() {
    kata_build_chapter "$@" || return
    kata_run_trusted "$@"
}

# Builds chapter $1's specs, as kata_run_chapter does, logging to $2.log; returns 0 when built,
# 1 when the build failed, 124 when it timed out.
kata_build_chapter() {
    local chapter=$1 out=$2 status
    shift 2
    rm -f "$out"
    KATA_CHAPTER=$chapter kata_run_bounded "${KATA_BUILD_SECONDS:-1800}" "$out.log" \
        kata_capped swift build --build-tests "$@"
    status=$?
    [ "$status" -eq 124 ] && return 124
    { [ "$status" -eq 0 ] && grep -q "Build complete!" "$out.log"; } || return 1
}

# Runs chapter $1's built specs as kata_run_built does, once more when the report was cut short;
# returns kata_run_built's status.
kata_run_trusted() {
    local chapter=$1 out=$2 status
    shift 2
    kata_run_built "$chapter" "$out" "$@"
    status=$?
    # Chapter 1's starter run once left a test report cut short mid-message (its exit test's
    # child had crashed by design); a report without its end is not trusted: run once more.
    if [ "$status" -eq 2 ] && [ -s "$out.xunit-swift-testing.xml" ] &&
        ! grep -q "</testsuites>" "$out.xunit-swift-testing.xml"; then
        kata_run_built "$chapter" "$out" "$@"
        status=$?
    fi
    return "$status"
}

# The ids of chapter $1's specs in build folder $2, one per line (as `swift test list` prints
# them), into file $3.
kata_list_specs() {
    KATA_CHAPTER=$1 swift test list --skip-build --scratch-path "$2" 2> "$3.log" |
        grep -E "${KATA_SPEC_FILTER:-^Chapter${1}Tests\\.}" > "$3"
}

# A `--filter` pattern that selects the spec with id $1 (as `swift test list` prints it) alone.
kata_spec_pattern() {
    printf '%s\\(' "$(printf '%s' "${1%%(*}" | sed 's/[.[\*^$+?{}|]/\\&/g')"
}

# After chapter $1's run into $2 crashed or hung, runs each of its specs in a process of its
# own (extra `swift test` arguments follow, a --scratch-path among them, already built), so
# that a trap or a hang costs only the spec that caused it. Rewrites $2 with a verdict per
# spec: pass, fail, crash (the process died) or hang (it did not end within
# KATA_SPEC_SECONDS). The specs are listed anew unless KATA_SPEC_LIST names a file that lists
# them. Returns 1 if the specs could not even be listed.
kata_isolate_specs() {
    local chapter=$1 out=$2 id suite name status one=$2.one
    shift 2
    if [ -n "${KATA_SPEC_LIST:-}" ] && [ -s "$KATA_SPEC_LIST" ]; then
        grep -E "${KATA_SPEC_FILTER:-^Chapter${chapter}Tests\\.}" "$KATA_SPEC_LIST" > "$out.list"
    else
        kata_list_specs "$chapter" "$(kata_scratch_of "$@")" "$out.list"
    fi
    [ -s "$out.list" ] || return 1
    : > "$out.isolated"
    : > "$out.signals"
    while IFS= read -r id; do
        suite=$(printf '%s' "${id%/*}" | tr '/' '.')
        name=${id##*/}
        rm -f "$one.log"
        KATA_SPEC_FILTER=$(kata_spec_pattern "$id") KATA_RUN_SECONDS=${KATA_SPEC_SECONDS:-$(kata_seconds 30)} \
            kata_run_built "$chapter" "$one" "$@"
        status=$?
        grep -F "	$name" "$one" | head -1 > "$one.verdict"
        if [ "$status" -eq 124 ]; then
            printf 'hang\t%s\t%s\n' "$suite" "$name"
        elif [ "$status" -eq 0 ] && [ -s "$one.verdict" ]; then
            cat "$one.verdict"
        else
            printf 'crash\t%s\t%s\n' "$suite" "$name"
            printf '%s\t%s\n' "${name%%(*}" "$(grep -oiE 'exited with unexpected signal code [0-9]+' "$one.log" | grep -oE '[0-9]+$' | head -1)" >> "$out.signals"
        fi >> "$out.isolated"
        { printf '\n=== %s\n' "$id"; cat "$one.log"; } >> "$out.log"
    done < "$out.list"
    sort -t "$(printf '\t')" -k2,3 "$out.isolated" > "$out"
}

# The display name of spec function $2 (such as `totalIsShown()`) in chapter $1's specs.
kata_spec_title() {
    local name=${2%%(*}
    awk -v name="$name" '
        /@Test/ { title = ""; inside = 1 }
        inside && title == "" && /"/ { title = $0; sub(/^[^"]*"/, "", title); sub(/".*/, "", title) }
        inside && /func / {
            if ($0 ~ "func " name "\\(") { print title; exit }
            inside = 0
        }
    ' Tests/Chapter"$1"Tests/*.swift
}

# The hint of spec function $2 in chapter $1: the comment lines right above its @Test.
kata_spec_hint() {
    local name=${2%%(*}
    awk -v name="$name" '
        /^[ \t]*\/\// { block = block $0 "\n"; next }
        /@Test/ { hint = block; inside = 1 }
        inside && /func / {
            if ($0 ~ "func " name "\\(") { printf "%s", hint; exit }
            inside = 0
        }
        { block = "" }
    ' Tests/Chapter"$1"Tests/*.swift | sed 's/^[ \t]*\/\/ \{0,1\}//' | grep -vE '^(Covers|Paths):'
}

# Escapes $1 for a JSON string.
kata_json_string() {
    printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }')"
}

# One line on the first data race in ThreadSanitizer log $2: its kind, then each of its two
# accesses (read or write) with the first line of chapter $1's own code on that access's stack.
kata_race_summary() {
    local kind places
    kind=$(grep -m1 "WARNING: ThreadSanitizer" "$2" | sed 's/.*WARNING: ThreadSanitizer: //; s/ (pid=.*//')
    places=$(awk -v chapter="Chapter$1/" '
        /WARNING: ThreadSanitizer/ { n++; next }
        n != 1 { next }
        /^  (Previous )?(Atomic )?([Rr]ead|[Ww]rite) of size [0-9]+ / && count < 2 {
            access = $0; sub(/^  /, "", access); sub(/ of size.*/, "", access)
            access = tolower(substr(access, 1, 1)) substr(access, 2)
            want = 1; next
        }
        want && /#[0-9]+ / && match($0, /(Chapters|Solutions)\/Chapter[0-9]+\/[^ :]+:[0-9]+/) {
            where = substr($0, RSTART, RLENGTH)
            if (index(where, chapter)) {
                printf "%s%s at %s", (count++ ? " and " : ""), access, where
                want = 0
            }
        }
        /^ *$/ { want = 0 }
    ' "$2")
    printf 'ThreadSanitizer: %s%s' "${kind:-a data race}" "${places:+: $places}"
}

# The lesson section of chapter $1 that teaches its races (a ## heading that names races or
# ThreadSanitizer), or the lesson itself.
kata_race_section() {
    local heading
    heading=$(grep -m1 -iE '^## .*(race|threadsanitizer)' "Chapters/Chapter$1/README.md" | sed 's/^## //')
    if [ -n "$heading" ]; then
        printf 'Chapters/Chapter%s/README.md, section “%s”' "$1" "$heading"
    else
        printf 'Chapters/Chapter%s/README.md' "$1"
    fi
}

# The hint lines of level $3 (2 or 3) for spec function $2 in chapter $1's hints file.
kata_spec_hint_level() {
    local name=${2%%(*} file=Tests/Hints/Chapter$1.md
    [ -f "$file" ] || return 0
    awk -v name="$name" -v level="$3" '
        /^## / { inside = ($0 == "## " name); current = 0; next }
        !inside { next }
        /^[0-9]+\. / { current = $0; sub(/\..*/, "", current); if (current == level) { line = $0; sub(/^[0-9]+\. /, "", line); print line }; next }
        current == level && NF { sub(/^[ \t]+/, ""); print }
    ' "$file"
}

# The claim ids a mutant or control patch names in its first line, one per line.
kata_patch_claims() {
    head -1 "$1" | grep -oE '\bC[0-9]+\b' | sort -u
}

# Whether patch $1's first line carries tag $2 (tsan, linux-only, darwin-only).
kata_patch_has_tag() {
    head -1 "$1" | grep -qF "[$2]"
}

# Whether patch $1 adds, removes or changes a declaration at a file's or a type's top level (a
# line indented by at most four spaces), a private one included. After such a build, and after
# the next one, every spec file of the chapter is compiled again: Swift's incremental build
# follows a type's members as one fingerprint. A guess from the text, right for 684 of 715 builds.
kata_patch_changes_declarations() {
    grep -vE '^(\+\+\+|---) ' "$1" |
        grep -qE '^[+-] {0,4}(@|(private|fileprivate|public|internal|static|override|final|nonisolated|let|var|func|init|deinit|enum|struct|class|actor|case|extension|protocol|typealias|required|convenience|lazy|weak|unowned|open|mutating|subscript)\b)'
}

# Patches $@ in the order that builds them with the least compiling: first those that change
# only bodies (the specs, built against the solution's declarations, stay as they are), then the
# others, each of which compiles the specs again anyway.
kata_build_order() {
    local patch
    for patch; do kata_patch_changes_declarations "$patch" || printf '%s\n' "$patch"; done
    for patch; do kata_patch_changes_declarations "$patch" && printf '%s\n' "$patch"; done
}

# The claim ids the `// Covers:` line above spec function $2 of chapter $1 names, one per line.
kata_spec_claims() {
    local name=${2%%(*}
    awk -v name="$name" '
        /^[ \t]*\/\// { if ($0 ~ /Covers:/) covers = $0; next }
        /@Test/ { pending = covers; inside = 1 }
        inside && /func / {
            if ($0 ~ "func " name "\\(") { print pending; exit }
            inside = 0
        }
        !/@Test/ && !inside { covers = "" }
    ' Tests/Chapter"$1"Tests/*.swift | grep -oE '\bC[0-9]+\b' | sort -u
}

# What a spec that crashed the test process did, from the signal that ended it; $1 is the
# isolated run's file (kata_isolate_specs wrote $1.signals) and $2 the spec's function name.
kata_crash_words() {
    local signal
    signal=$(awk -F '\t' -v name="${2%%(*}" '$1 == name { print $2 }' "$1.signals" 2>/dev/null | head -1)
    case $signal in
        4|5) printf 'This spec crashed the test process with a trap (signal %s): a fatalError or precondition, a\nforce-unwrapped nil, an arithmetic overflow, a continuation resumed twice, an operation started\ntwice or while not ready, or an allocation that failed under the memory cap.' "$signal" ;;
        11|10) printf 'This spec crashed the test process with a memory fault (signal %s): most often a stack\noverflow (a function or property that calls itself without end) or an object used after it\nwas freed.' "$signal" ;;
        6) printf 'This spec crashed the test process with an abort (signal 6): an exception raised by\nFoundation on macOS, or an allocation that failed under the memory cap.' ;;
        9) printf 'This spec was killed (signal 9): most often it used more memory than the cap of %s MB\n(KATA_MEMORY_MB); look for work that allocates without end.' "${KATA_MEMORY_MB:-8192}" ;;
        *) printf 'This spec crashed the test process%s: your code trapped (an operation started twice or\nwhile not ready, a continuation resumed twice, a force-unwrapped nil), overflowed its stack, or\nran out of memory.' "${signal:+ (signal $signal)}" ;;
    esac
}

# The compiler's errors for chapter $1 in build log $2: in the chapter's code first, then in its
# specs (a public signature the specs call was changed), at most $3 lines.
kata_compile_errors() {
    local mine specs
    mine=$(grep -E "(Chapters|Solutions)/Chapter$1/.*error:" "$2" | sed 's|^.*/\(Chapters/\)|\1|; s|^.*/\(Solutions/\)|\1|' | sort -u)
    specs=$(grep -E "Tests/Chapter$1Tests/.*error:" "$2" | sed 's|^.*/\(Tests/\)|\1|' | sort -u)
    {
        [ -n "$mine" ] && printf '%s\n' "$mine"
        if [ -n "$specs" ]; then
            echo "The specs no longer compile against your code: keep the starter's public names and signatures."
            printf '%s\n' "$specs"
        fi
        [ -n "$mine$specs" ] || grep -m3 "error:" "$2"
    } | head -"$3"
}
