# Sourced by the project's scripts: finds a JDK 25+ and Maven, installing Maven from Debian if it is missing.
# Sets JAVA_HOME, PATH and MAVEN_OPTS; exits with a clear message when no JDK 25 is on the machine.

fabricrpc_java_version() { # prints the feature version of the JDK at $1, or nothing
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}'
}

fabricrpc_find_jdk() {
  local candidate version
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/javac" ] || continue
    version=$(fabricrpc_java_version "$candidate")
    if [ -n "$version" ] && [ "${version%%.*}" -ge 25 ] 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! FABRICRPC_JDK=$(fabricrpc_find_jdk); then
  echo "error: fabricrpc needs a JDK 25 or newer (javac included)." >&2
  echo "       None found in \$JAVA_HOME or /usr/lib/jvm. Install one (e.g. Temurin 25) and set JAVA_HOME to it." >&2
  exit 2
fi
export JAVA_HOME="$FABRICRPC_JDK"
export PATH="$JAVA_HOME/bin:$PATH"
# Maven's own Guava calls sun.misc.Unsafe; JDK 24+ warns about it on every build without this.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"

fabricrpc_apt_install() { # installs Debian packages that are missing; needs root (or sudo)
  local missing=() pkg
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing Debian packages: ${missing[*]}" >&2
  $sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# FABRICRPC_NO_MAVEN=1: the caller only runs java (scripts/fabricrpc exec on every node of an mpirun job).
if [ "${FABRICRPC_NO_MAVEN:-0}" != 1 ] && ! command -v mvn >/dev/null 2>&1; then
  fabricrpc_apt_install maven || { echo "error: Maven is missing and could not be installed (apt-get install maven)" >&2; exit 2; }
fi
