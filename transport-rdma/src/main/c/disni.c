/*
 * libdisni for the unmodified com.ibm.disni:disni:2.1 jar, written against rdma-core.
 *
 * Handles are raw C pointers cast to jlong: Java only stores, compares and passes them back, and
 * rdma_cm ids must keep one stable value (listen ids are looked up on CONNECT_REQUEST).
 * No global mutable state: the CM thread, CQ threads and application threads call in concurrently.
 * Work-request and completion buffers are Java-owned direct memory laid out as the rdma-core structs,
 * so they are handed to libibverbs as they are (zero copy, read only: Java re-posts them).
 */
#define _GNU_SOURCE
#include <jni.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define JVERBS_VERSION 32
/* fabricrpc's own stamp, separate from DiSNI's JNI version: DisniNativeLibrary refuses a library whose stamp
 * differs from its NATIVE_VERSION. Bump both together whenever the Java side relies on a native change. */
#define FABRICRPC_NATIVE_VERSION 1
/* The reference library creates every QP with 4 SGEs per direction; Java cannot pass the number. */
#define QP_MAX_SGE 4

#define PTR(h) ((void *)(intptr_t)(h))
#define HANDLE(p) ((jlong)(intptr_t)(p))

static void throw_io(JNIEnv *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void throw_io(JNIEnv *env, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if ((*env)->ExceptionCheck(env))
		return;
	jclass cls = (*env)->FindClass(env, "java/io/IOException");
	if (cls != NULL)
		(*env)->ThrowNew(env, cls, msg);
}

/* Errors that mean "there is no RDMA device here", so the message says what to install or configure. */
static const char *device_hint(int err)
{
	switch (err) {
	case ENODEV:
	case ENOENT:
	case ENXIO:
	case EADDRNOTAVAIL:
	case ENOSYS:
		return " (no RDMA device for this address or no rdma_cm support: check `ibv_devices` and `rdma link`;"
		       " install rdma-core and ibverbs-providers; without RDMA hardware add Soft-RoCE with"
		       " `rdma link add rxe0 type rxe netdev <interface>` and use that interface's IPv4 address)";
	default:
		return "";
	}
}

static void format_ipv4(const void *sa_ptr, char *out, size_t len)
{
	const struct sockaddr_in *sa = sa_ptr;
	const uint8_t *a = (const uint8_t *)&sa->sin_addr.s_addr;
	snprintf(out, len, "%u.%u.%u.%u:%u", a[0], a[1], a[2], a[3], ntohs(sa->sin_port));
}

/* Copies family, port and address only: bytes 8..15 of a pooled Java buffer may be stale. */
static void read_sockaddr(jlong addr, struct sockaddr_in *out)
{
	const struct sockaddr_in *in = PTR(addr);
	memset(out, 0, sizeof *out);
	out->sin_family = in->sin_family;
	out->sin_port = in->sin_port;
	out->sin_addr = in->sin_addr;
}

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* ---------- version and layout handshake: constants of the headers we compile against ---------- */

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getVersion(JNIEnv *env, jobject self)
{
	return JVERBS_VERSION;
}

JNIEXPORT jint JNICALL Java_io_fabricrpc_transport_rdma_nativelib_DisniNativeLibrary_nativeVersion(JNIEnv *env, jclass cls)
{
	return FABRICRPC_NATIVE_VERSION;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getSockAddrInSize(JNIEnv *env, jobject self)
{
	return sizeof(struct sockaddr_in);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getIbvRecvWRSize(JNIEnv *env, jobject self)
{
	return sizeof(struct ibv_recv_wr);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getIbvSendWRSize(JNIEnv *env, jobject self)
{
	return sizeof(struct ibv_send_wr);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getIbvSgeSize(JNIEnv *env, jobject self)
{
	return sizeof(struct ibv_sge);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getIbvWCSize(JNIEnv *env, jobject self)
{
	return sizeof(struct ibv_wc);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getRemoteAddressOffset(JNIEnv *env, jobject self)
{
	return offsetof(struct ibv_send_wr, wr.rdma.remote_addr);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getRKeyOffset(JNIEnv *env, jobject self)
{
	return offsetof(struct ibv_send_wr, wr.rdma.rkey);
}

/* Java writes these structs itself; fail the build if the headers ever disagree with its fixed offsets. */
_Static_assert(sizeof(struct ibv_sge) == 16, "ibv_sge");
_Static_assert(sizeof(struct ibv_wc) == 48, "ibv_wc");
_Static_assert(offsetof(struct ibv_send_wr, wr_id) == 0 && offsetof(struct ibv_send_wr, next) == 8 &&
	       offsetof(struct ibv_send_wr, sg_list) == 16 && offsetof(struct ibv_send_wr, num_sge) == 24 &&
	       offsetof(struct ibv_send_wr, opcode) == 28 && offsetof(struct ibv_send_wr, send_flags) == 32 &&
	       offsetof(struct ibv_send_wr, imm_data) == 36, "ibv_send_wr head");
_Static_assert(offsetof(struct ibv_recv_wr, num_sge) == 24, "ibv_recv_wr");

/* ---------- rdma_cm ---------- */

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1createEventChannel(JNIEnv *env, jobject self)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (ch == NULL) {
		int err = errno;
		throw_io(env, "rdma_create_event_channel failed: %s%s", strerror(err),
			 err == ENOENT || err == ENODEV || err == ENXIO
				 ? " (/dev/infiniband/rdma_cm is missing: no RDMA device or the rdma_ucm kernel module is"
				   " not loaded; check `ibv_devices`, install rdma-core; without RDMA hardware use Soft-RoCE:"
				   " `rdma link add rxe0 type rxe netdev <interface>`)"
				 : device_hint(err));
		return -1;
	}
	/* Several threads may poll one fd; a spurious wake-up must not block inside rdma_get_cm_event. */
	if (set_nonblocking(ch->fd)) {
		int err = errno;
		rdma_destroy_event_channel(ch);
		throw_io(env, "cannot make the rdma_cm event channel non-blocking: %s", strerror(err));
		return -1;
	}
	return HANDLE(ch);
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1createId(JNIEnv *env, jobject self, jlong channel, jshort ps)
{
	struct rdma_cm_id *id = NULL;
	if (channel == 0) {
		throw_io(env, "createId: event channel handle is 0");
		return -1;
	}
	if (rdma_create_id(PTR(channel), &id, NULL, (enum rdma_port_space)(uint16_t)ps)) {
		throw_io(env, "rdma_create_id(ps=0x%x) failed: %s", (unsigned)(uint16_t)ps, strerror(errno));
		return -1;
	}
	return HANDLE(id);
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1bindAddr(JNIEnv *env, jobject self, jlong id, jlong addr)
{
	struct sockaddr_in sa;
	char txt[32];
	if (id == 0 || addr == 0) {
		throw_io(env, "bindAddr: null handle (id=%lld, addr=%lld)", (long long)id, (long long)addr);
		return;
	}
	read_sockaddr(addr, &sa);
	if (rdma_bind_addr(PTR(id), (struct sockaddr *)&sa)) {
		int err = errno;
		format_ipv4(&sa, txt, sizeof txt);
		throw_io(env, "rdma_bind_addr(%s) failed: %s%s", txt, strerror(err), device_hint(err));
	}
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1listen(JNIEnv *env, jobject self, jlong id, jint backlog)
{
	if (id == 0) {
		throw_io(env, "listen: id handle is 0");
		return;
	}
	if (rdma_listen(PTR(id), backlog))
		throw_io(env, "rdma_listen(backlog=%d) failed: %s", (int)backlog, strerror(errno));
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1resolveAddr(JNIEnv *env, jobject self, jlong id, jlong src, jlong dst, jint timeout)
{
	struct sockaddr_in s, d;
	char txt[32];
	if (id == 0 || dst == 0) {
		throw_io(env, "resolveAddr: null handle (id=%lld, dst=%lld)", (long long)id, (long long)dst);
		return;
	}
	read_sockaddr(dst, &d);
	if (src != 0)
		read_sockaddr(src, &s);
	if (rdma_resolve_addr(PTR(id), src != 0 ? (struct sockaddr *)&s : NULL, (struct sockaddr *)&d, timeout)) {
		int err = errno;
		format_ipv4(&d, txt, sizeof txt);
		throw_io(env, "rdma_resolve_addr(%s, timeout=%d ms) failed: %s%s", txt, (int)timeout, strerror(err),
			 device_hint(err));
	}
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1resolveRoute(JNIEnv *env, jobject self, jlong id, jint timeout)
{
	if (id == 0) {
		throw_io(env, "resolveRoute: id handle is 0");
		return;
	}
	if (rdma_resolve_route(PTR(id), timeout))
		throw_io(env, "rdma_resolve_route(timeout=%d ms) failed: %s", (int)timeout, strerror(errno));
}

/* Never throws: -1 means timeout or failure. The event is acked here because Java's ack carries only
 * the type, and rdma_destroy_id would block forever on an unacked event. */
JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getCmEvent(JNIEnv *env, jobject self, jlong channel, jlong listenid, jlong clientid, jint timeout)
{
	struct rdma_event_channel *ch = PTR(channel);
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	int type;

	if (ch == NULL || listenid == 0 || clientid == 0)
		return -1;
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, timeout) <= 0)
		return -1;
	if (rdma_get_cm_event(ch, &ev))
		return -1; /* EAGAIN: another thread took it */
	type = ev->event;
	*(int64_t *)PTR(listenid) = ev->listen_id != NULL ? HANDLE(ev->listen_id) : -1;
	*(int64_t *)PTR(clientid) = ev->id != NULL ? HANDLE(ev->id) : -1;
	rdma_ack_cm_event(ev);
	return type;
}

static void fill_conn_param(struct rdma_conn_param *p, jint retry, jint rnr_retry)
{
	memset(p, 0, sizeof *p);
	/* Java cannot set the RDMA READ depths; the sentinels let librdmacm use the device maxima. */
	p->initiator_depth = RDMA_MAX_INIT_DEPTH;
	p->responder_resources = RDMA_MAX_RESP_RES;
	p->retry_count = (uint8_t)retry;
	p->rnr_retry_count = (uint8_t)rnr_retry;
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1connect(JNIEnv *env, jobject self, jlong id, jint retry, jint rnr_retry, jlong privdata, jbyte privlen)
{
	struct rdma_conn_param p;
	if (id == 0) {
		throw_io(env, "connect: id handle is 0");
		return;
	}
	fill_conn_param(&p, retry, rnr_retry);
	p.private_data = privdata != 0 ? PTR(privdata) : NULL;
	p.private_data_len = privdata != 0 ? (uint8_t)privlen : 0;
	if (rdma_connect(PTR(id), &p))
		throw_io(env, "rdma_connect failed: %s", strerror(errno));
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1accept(JNIEnv *env, jobject self, jlong id, jint retry, jint rnr_retry)
{
	struct rdma_conn_param p;
	if (id == 0) {
		throw_io(env, "accept: id handle is 0");
		return;
	}
	fill_conn_param(&p, retry, rnr_retry);
	if (rdma_accept(PTR(id), &p))
		throw_io(env, "rdma_accept failed: %s", strerror(errno));
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1ackCmEvent(JNIEnv *env, jobject self, jint type)
{
	return 0; /* already acked in getCmEvent */
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1disconnect(JNIEnv *env, jobject self, jlong id)
{
	if (id == 0) {
		throw_io(env, "disconnect: id handle is 0");
		return -1;
	}
	return rdma_disconnect(PTR(id));
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1destroyEventChannel(JNIEnv *env, jobject self, jlong channel)
{
	if (channel == 0)
		return -1;
	rdma_destroy_event_channel(PTR(channel));
	return 0;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1destroyCmId(JNIEnv *env, jobject self, jlong id)
{
	return id == 0 ? -1 : rdma_destroy_id(PTR(id));
}

/* Takes the CM id, not the QP: the QP belongs to the id. */
JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1destroyQP(JNIEnv *env, jobject self, jlong id)
{
	struct rdma_cm_id *cm = PTR(id);
	if (cm == NULL || cm->qp == NULL)
		return -1;
	rdma_destroy_qp(cm);
	return 0;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1destroyEp(JNIEnv *env, jobject self, jlong id)
{
	if (id == 0)
		return -1;
	rdma_destroy_ep(PTR(id));
	return 0;
}

/* Writes exactly one sockaddr_in (16 bytes): the Java buffer is a 64-byte pooled slot. */
static jint copy_addr(struct sockaddr *sa, jlong out)
{
	if (sa == NULL || out == 0 || sa->sa_family != AF_INET)
		return -1;
	memcpy(PTR(out), sa, sizeof(struct sockaddr_in));
	return 0;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getSrcAddr(JNIEnv *env, jobject self, jlong id, jlong out)
{
	return id == 0 ? -1 : copy_addr(rdma_get_local_addr(PTR(id)), out);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getDstAddr(JNIEnv *env, jobject self, jlong id, jlong out)
{
	return id == 0 ? -1 : copy_addr(rdma_get_peer_addr(PTR(id)), out);
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getContext(JNIEnv *env, jobject self, jlong id)
{
	struct rdma_cm_id *cm = PTR(id);
	if (cm == NULL) {
		throw_io(env, "getContext: id handle is 0");
		return -1;
	}
	return cm->verbs != NULL ? HANDLE(cm->verbs) : -1; /* wildcard-bound ids have no device yet */
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1createQP(JNIEnv *env, jobject self, jlong id, jlong pd, jlong sendcq, jlong recvcq, jint qptype, jint maxsendwr, jint maxrecvwr, jint maxinline)
{
	struct rdma_cm_id *cm = PTR(id);
	struct ibv_qp_init_attr attr;
	if (id == 0 || pd == 0 || sendcq == 0 || recvcq == 0) {
		throw_io(env, "createQP: null handle (id=%lld, pd=%lld, sendcq=%lld, recvcq=%lld)", (long long)id,
			 (long long)pd, (long long)sendcq, (long long)recvcq);
		return -1;
	}
	memset(&attr, 0, sizeof attr);
	attr.send_cq = PTR(sendcq);
	attr.recv_cq = PTR(recvcq);
	attr.qp_type = (enum ibv_qp_type)qptype;
	attr.cap.max_send_wr = (uint32_t)maxsendwr;
	attr.cap.max_recv_wr = (uint32_t)maxrecvwr;
	attr.cap.max_send_sge = QP_MAX_SGE;
	attr.cap.max_recv_sge = QP_MAX_SGE;
	attr.cap.max_inline_data = (uint32_t)maxinline;
	attr.sq_sig_all = 0; /* only IBV_SEND_SIGNALED work requests complete */
	if (rdma_create_qp(cm, PTR(pd), &attr)) {
		throw_io(env, "rdma_create_qp(type=%d, max_send_wr=%d, max_recv_wr=%d, max_inline=%d) failed: %s",
			 (int)qptype, (int)maxsendwr, (int)maxrecvwr, (int)maxinline, strerror(errno));
		return -1;
	}
	return HANDLE(cm->qp);
}

/* ---------- verbs resources ---------- */

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1allocPd(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_pd *pd;
	if (ctx == 0 || ctx == -1) {
		throw_io(env, "allocPd: no device context (handle %lld)", (long long)ctx);
		return -1;
	}
	pd = ibv_alloc_pd(PTR(ctx));
	if (pd == NULL) {
		throw_io(env, "ibv_alloc_pd failed: %s", strerror(errno));
		return -1;
	}
	return HANDLE(pd);
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1createCompChannel(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_comp_channel *cc;
	if (ctx == 0 || ctx == -1) {
		throw_io(env, "createCompChannel: no device context (handle %lld)", (long long)ctx);
		return -1;
	}
	cc = ibv_create_comp_channel(PTR(ctx));
	if (cc == NULL) {
		throw_io(env, "ibv_create_comp_channel failed: %s", strerror(errno));
		return -1;
	}
	if (set_nonblocking(cc->fd)) {
		int err = errno;
		ibv_destroy_comp_channel(cc);
		throw_io(env, "cannot make the completion channel non-blocking: %s", strerror(err));
		return -1;
	}
	return HANDLE(cc);
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1createCQ(JNIEnv *env, jobject self, jlong ctx, jlong cc, jint ncqe, jint comp_vector)
{
	struct ibv_cq *cq;
	if (ctx == 0 || ctx == -1) {
		throw_io(env, "createCQ: no device context (handle %lld)", (long long)ctx);
		return -1;
	}
	cq = ibv_create_cq(PTR(ctx), ncqe, NULL, PTR(cc), comp_vector);
	if (cq == NULL) {
		throw_io(env, "ibv_create_cq(cqe=%d, comp_vector=%d) failed: %s", (int)ncqe, (int)comp_vector,
			 strerror(errno));
		return -1;
	}
	return HANDLE(cq);
}

/* librdmacm already drives the QP to RTS, and Java has no attribute serialisation: nothing to do. */
JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1modifyQP(JNIEnv *env, jobject self, jlong qp, jlong attr)
{
	return 0;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1deallocPd(JNIEnv *env, jobject self, jlong pd)
{
	return pd == 0 ? -1 : ibv_dealloc_pd(PTR(pd));
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1destroyCompChannel(JNIEnv *env, jobject self, jlong cc)
{
	return cc == 0 ? -1 : ibv_destroy_comp_channel(PTR(cc)); /* EBUSY while a CQ is attached */
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1destroyCQ(JNIEnv *env, jobject self, jlong cq)
{
	return cq == 0 ? -1 : ibv_destroy_cq(PTR(cq));
}

/* ---------- memory registration ---------- */

static void throw_reg_mr(JNIEnv *env, int err, jlong addr, jint len, jint access)
{
	struct rlimit rl;
	char limit[48] = "unknown";
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(limit, sizeof limit, "unlimited");
		else
			snprintf(limit, sizeof limit, "%llu bytes", (unsigned long long)rl.rlim_cur);
	}
	if (err == ENOMEM || err == EPERM || err == EAGAIN)
		throw_io(env, "ibv_reg_mr(addr=0x%llx, len=%d, access=0x%x) failed: %s; the locked-memory limit"
			      " (RLIMIT_MEMLOCK) is %s: raise it with `ulimit -l unlimited`, a memlock entry in"
			      " /etc/security/limits.conf, LimitMEMLOCK=infinity for systemd units or"
			      " --ulimit memlock=-1 for containers",
			 (unsigned long long)addr, (int)len, (unsigned)access, strerror(err), limit);
	else
		throw_io(env, "ibv_reg_mr(addr=0x%llx, len=%d, access=0x%x) failed: %s (memlock limit %s)",
			 (unsigned long long)addr, (int)len, (unsigned)access, strerror(err), limit);
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1regMr(JNIEnv *env, jobject self, jlong pd, jlong addr, jint len, jint access, jlong lkey, jlong rkey, jlong handle)
{
	struct ibv_mr *mr;
	if (pd == 0 || lkey == 0 || rkey == 0 || handle == 0) {
		throw_io(env, "regMr: null handle (pd=%lld)", (long long)pd);
		return -1;
	}
	if (len < 0) {
		throw_io(env, "regMr: negative length %d", (int)len);
		return -1;
	}
	mr = ibv_reg_mr(PTR(pd), PTR(addr), (size_t)len, access);
	if (mr == NULL) {
		throw_reg_mr(env, errno, addr, len, access);
		return -1;
	}
	*(uint32_t *)PTR(lkey) = mr->lkey;
	*(uint32_t *)PTR(rkey) = mr->rkey;
	*(uint32_t *)PTR(handle) = mr->handle;
	return HANDLE(mr);
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1deregMr(JNIEnv *env, jobject self, jlong mr)
{
	int ret;
	if (mr == 0) {
		throw_io(env, "deregMr: memory region handle is 0");
		return;
	}
	ret = ibv_dereg_mr(PTR(mr));
	if (ret)
		throw_io(env, "ibv_dereg_mr failed: %s", strerror(ret));
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1queryOdpSupport(JNIEnv *env, jobject self, jlong ctx)
{
	struct ibv_device_attr_ex attr;
	if (ctx == 0 || ctx == -1)
		return -1;
	memset(&attr, 0, sizeof attr);
	if (ibv_query_device_ex(PTR(ctx), NULL, &attr))
		return -1;
	if (!(attr.odp_caps.general_caps & IBV_ODP_SUPPORT))
		return -1;
	return (jint)attr.odp_caps.per_transport_caps.rc_odp_caps;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1expPrefetchMr(JNIEnv *env, jobject self, jlong mrh, jlong addr, jint len)
{
	struct ibv_mr *mr = PTR(mrh);
	struct ibv_sge sge;
	int ret;
	if (mr == NULL) {
		throw_io(env, "expPrefetchMr: memory region handle is 0");
		return -1;
	}
	sge.addr = (uint64_t)addr;
	sge.length = (uint32_t)len;
	sge.lkey = mr->lkey;
	ret = ibv_advise_mr(mr->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	if (ret == EOPNOTSUPP || ret == ENOSYS)
		return -1;
	if (ret) {
		throw_io(env, "ibv_advise_mr(addr=0x%llx, len=%d) failed: %s", (unsigned long long)addr, (int)len,
			 strerror(ret));
		return -1;
	}
	return 0;
}

/* ---------- data path: Java's buffers are ibv_send_wr/ibv_recv_wr lists, posted as they are ---------- */

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1postSend(JNIEnv *env, jobject self, jlong qp, jlong wrlist)
{
	struct ibv_send_wr *bad = NULL;
	int ret;
	if (qp == 0 || wrlist == 0) {
		throw_io(env, "postSend: null handle (qp=%lld, wr list=%lld)", (long long)qp, (long long)wrlist);
		return;
	}
	ret = ibv_post_send(PTR(qp), PTR(wrlist), &bad);
	if (ret) {
		const struct ibv_send_wr *first = PTR(wrlist);
		throw_io(env, "ibv_post_send failed: %s (first wr_id=%llu, opcode=%d; failing wr_id=%llu)%s",
			 strerror(ret), (unsigned long long)first->wr_id, (int)first->opcode,
			 bad != NULL ? (unsigned long long)bad->wr_id : 0ULL,
			 ret == ENOMEM ? ": send queue full or more than 4 SGEs" : "");
	}
}

JNIEXPORT void JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1postRecv(JNIEnv *env, jobject self, jlong qp, jlong wrlist)
{
	struct ibv_recv_wr *bad = NULL;
	int ret;
	if (qp == 0 || wrlist == 0) {
		throw_io(env, "postRecv: null handle (qp=%lld, wr list=%lld)", (long long)qp, (long long)wrlist);
		return;
	}
	ret = ibv_post_recv(PTR(qp), PTR(wrlist), &bad);
	if (ret)
		throw_io(env, "ibv_post_recv failed: %s (failing wr_id=%llu)%s", strerror(ret),
			 bad != NULL ? (unsigned long long)bad->wr_id : 0ULL,
			 ret == ENOMEM ? ": receive queue full or more than 4 SGEs" : "");
}

/* ---------- completions ---------- */

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getCqEvent(JNIEnv *env, jobject self, jlong ccHandle, jint timeout)
{
	struct ibv_comp_channel *cc = PTR(ccHandle);
	struct ibv_cq *cq;
	void *ctx;
	struct pollfd pfd;
	if (cc == NULL) {
		throw_io(env, "getCqEvent: completion channel handle is 0");
		return -1;
	}
	pfd.fd = cc->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, timeout) <= 0)
		return -1;
	/* Not acked here: Java acks through ackCqEvent on the CQ it already knows. */
	return ibv_get_cq_event(cc, &cq, &ctx) ? -1 : 0;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1pollCQ(JNIEnv *env, jobject self, jlong cq, jint ne, jlong wclist)
{
	if (cq == 0 || wclist == 0) {
		throw_io(env, "pollCQ: null handle (cq=%lld, wc list=%lld)", (long long)cq, (long long)wclist);
		return -1;
	}
	return ibv_poll_cq(PTR(cq), ne, PTR(wclist));
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1reqNotifyCQ(JNIEnv *env, jobject self, jlong cq, jint solicited)
{
	if (cq == 0) {
		throw_io(env, "reqNotifyCQ: CQ handle is 0");
		return -1;
	}
	return ibv_req_notify_cq(PTR(cq), solicited);
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1ackCqEvent(JNIEnv *env, jobject self, jlong cq, jint nevents)
{
	if (cq == 0)
		return -1;
	ibv_ack_cq_events(PTR(cq), (unsigned)nevents);
	return 0;
}

/* ---------- field lookups ---------- */

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getQpNum(JNIEnv *env, jobject self, jlong qp)
{
	if (qp == 0) {
		throw_io(env, "getQpNum: QP handle is 0");
		return -1;
	}
	return (jint)((struct ibv_qp *)PTR(qp))->qp_num;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getContextFd(JNIEnv *env, jobject self, jlong ctx)
{
	if (ctx == 0 || ctx == -1) {
		throw_io(env, "getContextFd: no device context (handle %lld)", (long long)ctx);
		return -1;
	}
	return ((struct ibv_context *)PTR(ctx))->cmd_fd;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getContextNumCompVectors(JNIEnv *env, jobject self, jlong ctx)
{
	if (ctx == 0 || ctx == -1) {
		throw_io(env, "getContextNumCompVectors: no device context (handle %lld)", (long long)ctx);
		return -1;
	}
	return ((struct ibv_context *)PTR(ctx))->num_comp_vectors;
}

JNIEXPORT jint JNICALL Java_com_ibm_disni_verbs_impl_NativeDispatcher__1getPdHandle(JNIEnv *env, jobject self, jlong pd)
{
	if (pd == 0) {
		throw_io(env, "getPdHandle: PD handle is 0");
		return -1;
	}
	return (jint)((struct ibv_pd *)PTR(pd))->handle;
}

/* ---------- com.ibm.disni.util.NativeAffinity (static methods) ---------- */

JNIEXPORT void JNICALL Java_com_ibm_disni_util_NativeAffinity__1setAffinity(JNIEnv *env, jclass cls, jlong mask)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int cpu = 0; cpu < 64; cpu++)
		if ((uint64_t)mask & (1ULL << cpu))
			CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set); /* calling thread; best effort like the reference */
}

JNIEXPORT jlong JNICALL Java_com_ibm_disni_util_NativeAffinity__1getAffinity(JNIEnv *env, jclass cls)
{
	cpu_set_t set;
	uint64_t mask = 0;
	if (sched_getaffinity(0, sizeof set, &set))
		return -1;
	for (int cpu = 0; cpu < 64; cpu++)
		if (CPU_ISSET(cpu, &set))
			mask |= 1ULL << cpu;
	return (jlong)mask;
}
