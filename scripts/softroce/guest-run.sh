#!/usr/bin/env bash
# Boots a throw-away Soft-RoCE (rdma_rxe) guest under QEMU and runs one command in it.
#
#   scripts/softroce/guest-run.sh [--rw DIR]... [--timeout SEC] [--mem MB] [--link listen:PORT|connect:PORT
#                                 --link-ip ADDR] [--] command [args...]
#   scripts/softroce/guest-run.sh --prepare      # only install packages, fetch kernel, build initramfs
#
# The guest sees the host's root filesystem read-only with a tmpfs overlay (writes vanish at power-off),
# the command runs in the caller's working directory under bash, as root, with `ulimit -l unlimited`
# and an rxe device `rxe0` on eth0 (10.0.2.15). Each --rw DIR is shared read-write at the same path so
# results survive. The command's output is streamed to stdout; the exit status is the command's.
# --link gives the guest a second NIC on a QEMU socket network shared with another guest (one listens on the host's
# 127.0.0.1:PORT, the other connects), with address ADDR/24 and an rxe device `rxe1` on it: two guests, two kernels,
# RDMA between them (scripts/rdma-two-guests.sh). Start the listening guest first.
# Exit codes of the harness itself: 124 = guest timed out, 125 = guest failed to boot or run the command.
#
# Cache: ${FABRICRPC_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fabricrpc-softroce} (kernel, initramfs).
set -euo pipefail

CACHE="${FABRICRPC_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fabricrpc-softroce}"
# Bump when the initramfs (/init, stage 2, module list) changes: cached guests are rebuilt.
HARNESS_VERSION=3
HOST_PKGS=(qemu-system-x86 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
           iproute2 busybox-static kmod xz-utils cpio util-linux)
# Modules the guest needs; their dependencies are resolved from modules.dep.
WANTED_MODULES=(virtio_pci virtio_net 9p 9pnet_virtio overlay rdma_rxe rdma_ucm ib_uverbs rdma_cm)

log() { echo "guest-run: $*" >&2; }
die() { echo "guest-run: ERROR: $*" >&2; exit 125; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

install_host_packages() {
  local missing=() p name
  for p in "${HOST_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing host packages: ${missing[*]}"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

prepare_kernel() {
  local kpkg
  kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  if [ -z "$kpkg" ]; then
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  fi
  [ -n "$kpkg" ] || die "cannot resolve linux-image-amd64 to a versioned kernel package"
  KVER=${kpkg#linux-image-}
  KDIR="$CACHE/$KVER"
  [ "$(cat "$KDIR/ready" 2>/dev/null)" = "$HARNESS_VERSION" ] && return 0
  # Several runs may share the cache: one prepares, the others wait for it.
  exec 9>"$CACHE/.prepare.lock"
  flock -w 600 9 || die "timed out waiting for another run to prepare $CACHE"
  if [ "$(cat "$KDIR/ready" 2>/dev/null)" = "$HARNESS_VERSION" ]; then exec 9>&-; return 0; fi
  if [ -f "$KDIR/vmlinux" ] && [ -f "$KDIR/root/lib/modules/$KVER/modules.dep" ]; then
    log "rebuilding the initramfs for harness version $HARNESS_VERSION"
    build_initramfs
    echo "$HARNESS_VERSION" > "$KDIR/ready"
    exec 9>&-
    return 0
  fi
  log "preparing guest kernel $KVER in $KDIR (one time)"
  rm -rf "$KDIR"; mkdir -p "$KDIR/dl"
  (cd "$KDIR/dl" && apt-get download -qq "$kpkg" 2>&1 | grep -v "unsandboxed" >&2; [ -n "$(ls "$KDIR"/dl/*.deb 2>/dev/null)" ]) || die "apt-get download $kpkg failed"
  dpkg -x "$KDIR"/dl/*.deb "$KDIR/root"
  depmod -b "$KDIR/root" "$KVER"
  # The PVH entry point of the uncompressed kernel boots without BIOS or in-guest decompression.
  local vmlinuz="$KDIR/root/boot/vmlinuz-$KVER" off
  off=$(LC_ALL=C grep -obUaP '\xFD\x37\x7A\x58\x5A\x00' "$vmlinuz" | head -1 | cut -d: -f1)
  [ -n "$off" ] || die "no xz payload in $vmlinuz"
  tail -c +$((off + 1)) "$vmlinuz" | xz -dc 2>/dev/null > "$KDIR/vmlinux" || true
  head -c 4 "$KDIR/vmlinux" | grep -q 'ELF' || die "could not extract vmlinux from $vmlinuz"
  build_initramfs
  rm -rf "$KDIR/dl"
  echo "$HARNESS_VERSION" > "$KDIR/ready"
  exec 9>&-
}

build_initramfs() {
  local mdir="$KDIR/root/lib/modules/$KVER" ir="$KDIR/initramfs" order=() seen=" " m line rel dep
  rm -rf "$ir"; mkdir -p "$ir"/{bin,mods,proc,sys,dev,lower,rw,newroot}
  cp /bin/busybox "$ir/bin/busybox"
  # modules.dep lists every transitive dependency of a module, nearest last: load them back to front.
  add_module() {
    local name=$1 path deps i
    line=$(grep -E "(^|/)${name//_/[_-]}\.ko(\.[a-z]+)?:" "$mdir/modules.dep" | head -1) || true
    [ -n "$line" ] || { log "module $name not found (assuming built in)"; return 0; }
    path=${line%%:*}
    read -r -a deps <<< "${line#*:}"
    for ((i = ${#deps[@]} - 1; i >= 0; i--)); do add_path "${deps[$i]}"; done
    add_path "$path"
  }
  add_path() {
    case "$seen" in *" $1 "*) return 0 ;; esac
    seen+="$1 "; order+=("$1")
  }
  for m in "${WANTED_MODULES[@]}"; do add_module "$m"; done
  : > "$ir/modules.order"
  for rel in "${order[@]}"; do
    local base; base=$(basename "$rel"); base=${base%%.ko*}
    case "$rel" in
      *.ko.xz) xz -dc "$mdir/$rel" > "$ir/mods/$base.ko" ;;
      *.ko.zst) zstd -qdc "$mdir/$rel" > "$ir/mods/$base.ko" ;;
      *) cp "$mdir/$rel" "$ir/mods/$base.ko" ;;
    esac
    echo "$base" >> "$ir/modules.order"
  done
  cat > "$ir/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
echo 1 > /proc/sys/kernel/printk
for m in $(cat /modules.order); do insmod /mods/$m.ko 2>/dev/null || echo "init: insmod $m failed"; done
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=524288,cache=loose hostroot /lower || { echo "init: no hostroot"; echo o > /proc/sysrq-trigger; }
mount -t tmpfs -o mode=0755 tmpfs /rw; mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot
mkdir -p /newroot/.softroce
cp /stage2.sh /newroot/.softroce/stage2.sh
for d in proc sys dev; do mount --move /$d /newroot/$d; done
exec switch_root /newroot /bin/bash /.softroce/stage2.sh
INIT
  chmod +x "$ir/init"
  cat > "$ir/stage2.sh" <<'STAGE2'
# Second stage, PID 1 inside the overlay root. Paths and the command come from /xfer (host per-run dir).
mkdir -p /dev/pts /dev/shm /run /xfer
mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm; mount -t tmpfs tmpfs /run
ln -sf /proc/self/fd /dev/fd; ln -sf fd/0 /dev/stdin; ln -sf fd/1 /dev/stdout; ln -sf fd/2 /dev/stderr
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 xfer /xfer
off() { sync; echo o > /proc/sysrq-trigger; sleep 30; }
[ -f /xfer/guest.env ] || { echo "stage2: no /xfer/guest.env"; off; }
. /xfer/guest.env
mkdir -p "/lib/modules/$(uname -r)" && mount --bind "$SOFTROCE_MODULES" "/lib/modules/$(uname -r)"
i=0
for d in $SOFTROCE_RW; do
  mkdir -p "$d" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 "rw$i" "$d"
  i=$((i + 1))
done
ulimit -l unlimited
ip link set lo up
ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up && ip route add default via 10.0.2.2
rdma link add rxe0 type rxe netdev eth0 || echo "stage2: rdma link add failed"
echo "10.0.2.15 $(hostname)" >> /etc/hosts
if [ -n "${SOFTROCE_LINK_IP:-}" ]; then
  link=""
  for n in /sys/class/net/*; do [ "$(cat "$n/address")" = "$SOFTROCE_LINK_MAC" ] && link=${n##*/}; done
  if [ -n "$link" ]; then
    ip addr add "$SOFTROCE_LINK_IP/24" dev "$link" && ip link set "$link" up
    rdma link add rxe1 type rxe netdev "$link" || echo "stage2: rdma link add rxe1 failed"
  else
    echo "stage2: no interface with MAC $SOFTROCE_LINK_MAC"
  fi
fi
echo started > /xfer/started
bash /xfer/cmd.sh > /xfer/out.log 2>&1 < /dev/null
echo $? > /xfer/rc
off
STAGE2
  # Written aside and renamed: a concurrent run may be booting from the previous initrd.
  (cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1 > "$KDIR/initrd.gz.new")
  mv -f "$KDIR/initrd.gz.new" "$KDIR/initrd.gz"
  rm -rf "$ir"
}

# ---------- arguments ----------
RW=() TIMEOUT=${FABRICRPC_SOFTROCE_TIMEOUT:-900} MEM=4096 PREPARE_ONLY=0 LINK="" LINK_IP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rw) RW+=("$(cd "$2" && pwd)"); shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --prepare) PREPARE_ONLY=1; shift ;;
    --link) LINK=$2; shift 2 ;;
    --link-ip) LINK_IP=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $PREPARE_ONLY -eq 1 ] || [ $# -gt 0 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
case "$LINK" in
  "") [ -z "$LINK_IP" ] || { echo "guest-run: --link-ip needs --link" >&2; exit 2; } ;;
  listen:[0-9]*|connect:[0-9]*) [ -n "$LINK_IP" ] || { echo "guest-run: --link needs --link-ip" >&2; exit 2; } ;;
  *) echo "guest-run: --link must be listen:PORT or connect:PORT, got $LINK" >&2; exit 2 ;;
esac

mkdir -p "$CACHE"
t0=$(date +%s)
install_host_packages
prepare_kernel
[ $PREPARE_ONLY -eq 1 ] && { log "prepared $KDIR in $(( $(date +%s) - t0 )) s"; exit 0; }

RUN=$(mktemp -d "${TMPDIR:-/tmp}/softroce-run.XXXXXX")
QPID=""
cleanup() { [ -n "$QPID" ] && kill "$QPID" 2>/dev/null; [ -n "${TPID:-}" ] && kill "$TPID" 2>/dev/null; rm -rf "$RUN"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

{
  printf 'SOFTROCE_MODULES=%q\n' "$KDIR/root/lib/modules/$KVER"
  printf 'SOFTROCE_RW=%q\n' "${RW[*]:-}"
  if [ -n "$LINK" ]; then
    # The two ends of a link get different MACs: the listening side ...:01, the connecting side ...:02.
    printf 'SOFTROCE_LINK_IP=%q\nSOFTROCE_LINK_MAC=%q\n' "$LINK_IP" "52:54:00:a5:00:0$([ "${LINK%%:*}" = listen ] && echo 1 || echo 2)"
  fi
} > "$RUN/guest.env"
{
  echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8'
  # UCX_*: the ucx column's settings (UCX reads only its environment).
  for v in JAVA_HOME MAVEN_OPTS $(compgen -e | grep -E '^(FABRICRPC|UCX)_' || true); do
    [ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  printf 'cd %q || exit 125\n' "$PWD"
  printf '%q ' "$@"; echo
} > "$RUN/cmd.sh"

QEMU_ARGS=(-accel tcg,thread=multi -cpu max -smp 2 -m "$MEM" -M q35 -nodefaults -no-user-config
  -display none -no-reboot -serial "file:$RUN/console.log"
  -kernel "$KDIR/vmlinux" -initrd "$KDIR/initrd.gz"
  -append "console=ttyS0 loglevel=1 panic=-1 rdinit=/init quiet"
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
  -virtfs "local,path=$RUN,mount_tag=xfer,security_model=none,multidevs=remap"
  -netdev user,id=n0 -device virtio-net-pci,netdev=n0)
if [ -n "$LINK" ]; then
  QEMU_ARGS+=(-netdev "socket,id=n1,${LINK%%:*}=127.0.0.1:${LINK#*:}"
    -device "virtio-net-pci,netdev=n1,mac=52:54:00:a5:00:0$([ "${LINK%%:*}" = listen ] && echo 1 || echo 2)")
fi
i=0
for d in "${RW[@]}"; do
  QEMU_ARGS+=(-virtfs "local,path=$d,mount_tag=rw$i,security_model=none,multidevs=remap")
  i=$((i + 1))
done

touch "$RUN/out.log"
tail -n +1 -f "$RUN/out.log" & TPID=$!
qemu-system-x86_64 "${QEMU_ARGS[@]}" & QPID=$!
deadline=$(( $(date +%s) + TIMEOUT ))
timed_out=0
while kill -0 "$QPID" 2>/dev/null; do
  if [ "$(date +%s)" -ge "$deadline" ]; then timed_out=1; kill "$QPID"; break; fi
  sleep 0.5
done
wait "$QPID" 2>/dev/null || true
QPID=""
sleep 0.3; kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null || true; TPID=""
elapsed=$(( $(date +%s) - t0 ))
if [ $timed_out -eq 1 ]; then
  log "guest timed out after ${TIMEOUT} s; console tail:"; tail -n 30 "$RUN/console.log" >&2; exit 124
fi
if [ ! -f "$RUN/rc" ]; then
  log "guest did not complete the command; console tail:"; tail -n 40 "$RUN/console.log" >&2; exit 125
fi
rc=$(cat "$RUN/rc")
log "command exited $rc; guest run took ${elapsed} s"
exit "$rc"
