#!/usr/bin/env bash
# Bouncy Castle's provider jar (Maven Central, checksum checked by Maven) into the Maven
# repository, once, and its path on standard output: the independent implementation that
# checks chainlab's composite ML-DSA certificates (tests/java/CompositeCheck.java). Needs
# the machine's Java and Maven (both on this project's machine kind).
set -euo pipefail
artifact=org.bouncycastle:bcprov-jdk18on:1.87
group=${artifact%%:*} rest=${artifact#*:} name=${rest%%:*} version=${artifact##*:}
repo=${MAVEN_REPOSITORY:-$HOME/.m2/repository}
jar="$repo/${group//.//}/$name/$version/$name-$version.jar"
if [ ! -f "$jar" ]; then
    command -v mvn >/dev/null || { echo "fetch-bouncy-castle.sh: no mvn on PATH (Maven fetches $artifact)" >&2; exit 1; }
    mvn -q dependency:get -Dartifact="$artifact" >&2
fi
echo "$jar"
