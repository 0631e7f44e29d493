package io.fabricrpc.transport.rdma.verbs;

import com.ibm.disni.verbs.IbvWC;
import java.io.IOException;
import java.util.List;

/**
 * A work request completed with an error status (for example a wrong rkey, an out-of-range remote address,
 * deregistered memory or a vanished peer). The message names the operation, the work-request id and the
 * {@code ibv_wc_status}. Once a QP reports one, the QP is in the error state and later requests are flushed.
 */
public final class WorkCompletionException extends IOException {
    private static final long serialVersionUID = 1L;

    /** {@code enum ibv_wc_status} names by ordinal. */
    private static final List<String> STATUS = List.of("SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
            "LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
            "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
            "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR",
            "RESP_TIMEOUT_ERR", "GENERAL_ERR");
    /** {@code enum ibv_wr_opcode} names by value. */
    private static final List<String> OPCODE = List.of("RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "SEND", "SEND_WITH_IMM",
            "RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD");

    private final String operation;
    private final long wrId;
    private final int status;

    public WorkCompletionException(String operation, long wrId, int status) {
        super(operation + " (wr_id " + wrId + ") failed with completion status " + statusName(status) + " (" + status
                + ")");
        this.operation = operation;
        this.wrId = wrId;
        this.status = status;
    }

    /**
     * @param wc        a polled completion
     * @param operation what the work request did (e.g. {@link #opcodeName(int)} of its opcode): verbs leave the
     *                  opcode of an error completion undefined, so the caller names it
     * @throws WorkCompletionException when {@code wc} carries an error status
     */
    public static void check(IbvWC wc, String operation) throws WorkCompletionException {
        if (wc.getStatus() != 0) {
            throw new WorkCompletionException(operation, wc.getWr_id(), wc.getStatus());
        }
    }

    /** @return the {@code ibv_wc_status} name, or {@code UNKNOWN} */
    public static String statusName(int status) {
        return status >= 0 && status < STATUS.size() ? STATUS.get(status) : "UNKNOWN";
    }

    /** @return the {@code ibv_wr_opcode} name of a send work request, or {@code OPCODE_n} */
    public static String opcodeName(int opcode) {
        return opcode >= 0 && opcode < OPCODE.size() ? OPCODE.get(opcode) : "OPCODE_" + opcode;
    }

    public String operation() {
        return operation;
    }

    public long wrId() {
        return wrId;
    }

    /** @return the raw {@code ibv_wc_status} */
    public int status() {
        return status;
    }
}
