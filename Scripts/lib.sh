# Shared by Scripts/grade, Scripts/verify and Scripts/reset; sourced, never run.
# Needs only bash 3.2, git, the Swift toolchain and POSIX tools.

# The chapters the manifest lists, one number per line.
kata_chapters() {
    awk -F '\t' '!/^#/ && NF >= 2 { print $1 }' Chapters/chapters.tsv
}

# The title of chapter $1.
kata_title() {
    awk -F '\t' -v n="$1" '!/^#/ && $1 == n { print $2 }' Chapters/chapters.tsv
}

# Whether chapter $1 lists check $2 (such as tsan) in the manifest.
kata_has_check() {
    awk -F '\t' -v n="$1" -v c="$2" '!/^#/ && $1 == n { split($3, a, ","); for (i in a) if (a[i] == c) found = 1 } END { exit !found }' Chapters/chapters.tsv
}

# Whether $1 names a chapter in the manifest.
kata_is_chapter() {
    kata_chapters | grep -qx "$1"
}

# Runs a command with output to file $2, killing it after $1 seconds.
# Returns the command's status, or 124 when it was killed for taking too long.
kata_run_bounded() {
    local seconds=$1 log=$2
    shift 2
    "$@" > "$log" 2>&1 &
    local pid=$! waited=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$waited" -ge $((seconds * 10)) ]; then
            kill -TERM "$pid" 2>/dev/null
            pkill -TERM -P "$pid" 2>/dev/null
            sleep 1
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            return 124
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
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

# Runs chapter $1's specs with the given extra `swift test` arguments; writes verdicts to $2
# and the log to $2.log. Returns 0 when the run completed (whatever its verdicts), 1 when the
# build failed, 2 when the test process crashed, 124 when it timed out.
kata_run_chapter() {
    local chapter=$1 out=$2
    shift 2
    local xml="$out.xunit.xml"
    rm -f "$out" "$xml" "${xml%.xml}-swift-testing.xml"
    kata_run_bounded "${KATA_RUN_SECONDS:-300}" "$out.log" \
        swift test "$@" --filter "Chapter${chapter}Tests\\." --xunit-output "$xml"
    local status=$?
    kata_verdicts "${xml%.xml}-swift-testing.xml" > "$out"
    [ "$status" -eq 124 ] && return 124
    grep -q "Build complete!" "$out.log" || return 1
    # An exit test's child may crash by design; only a crash of the runner itself counts.
    if [ ! -s "$out" ] || grep -q "exited with unexpected signal" "$out.log"; then
        return 2
    fi
    return 0
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
    ' Tests/Chapter"$1"Tests/*.swift | sed 's/^[ \t]*\/\/ \{0,1\}//' | grep -v '^Covers:'
}

# Escapes $1 for a JSON string.
kata_json_string() {
    printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }')"
}
