# Sourced by the Table 2 scripts: installs OpenUCX (scripts/install-ucx.sh) when their arguments select the `ucx`
# column (--columns ...,ucx,...; it is in no default column set, so a run without it never needs UCX).
table2_install_ucx_if_selected() { # benchmark args...
  local here prev="" arg columns
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  for arg in "$@"; do
    columns=""
    [[ "$prev" == --columns ]] && columns="$arg"
    [[ "$arg" == --columns=* ]] && columns="${arg#--columns=}"
    if [[ ",$columns," == *,ucx,* ]]; then
      "$here/install-ucx.sh"
      return
    fi
    prev="$arg"
  done
}
