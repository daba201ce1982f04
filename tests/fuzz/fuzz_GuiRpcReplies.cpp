// The BOINC client's GUI RPC replies (boinc/GuiRpcReplies, GuiRpcProtocol's small ones, NoticeText): every
// parser on the same bytes, as a client that misbehaves or is not BOINC could send them. What parses holds
// what nicer's types promise: task states among the keywords, fractions in 0..1, amounts never negative,
// transfers no further than their size, notices in order, the last seqno at least every one seen.

#include "FuzzSupport.h"
#include "boinc/GuiRpcProtocol.h"
#include "boinc/GuiRpcReplies.h"
#include "boinc/NoticeText.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using namespace nicer;

namespace {

bool finiteNotNegative(double v) {
    return std::isfinite(v) && v >= 0.0;
}

bool bySeqno(const api::BoincNotice& a, const api::BoincNotice& b) {
    return a.seqno < b.seqno;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view reply = fuzz::asText(data, size);

    if (const auto status = boinc::parseCcStatus(reply)) {
        FUZZ_CHECK(status->taskSuspendText == boinc::suspendReasonText(status->taskSuspendReason));
        FUZZ_CHECK(status->networkSuspendText == boinc::suspendReasonText(status->networkSuspendReason));
        FUZZ_CHECK(status->tasksSuspended() == !status->taskSuspendText.empty());
        FUZZ_CHECK(status->networkSuspended() == !status->networkSuspendText.empty());
        FUZZ_CHECK(!boinc::runModeName(status->taskMode).empty());
    }

    if (const auto projects = boinc::parseProjectStatus(reply)) {
        for (const auto& project : *projects) {
            FUZZ_CHECK(!project.url.empty());
            FUZZ_CHECK(std::isfinite(project.userCredit) && std::isfinite(project.hostCredit) &&
                       std::isfinite(project.recentCredit));
        }
    }

    if (const auto tasks = boinc::parseResults(reply)) {
        for (const auto& task : *tasks) {
            FUZZ_CHECK(!task.name.empty() && !task.projectUrl.empty());
            FUZZ_CHECK(static_cast<std::size_t>(task.state) < api::kBoincTaskStateKeywords.size());
            FUZZ_CHECK(task.fractionDone >= 0.0 && task.fractionDone <= 1.0);
            FUZZ_CHECK(finiteNotNegative(task.remainingSeconds));
            FUZZ_CHECK(std::isfinite(task.elapsedSeconds));
        }
    }

    if (const auto transfers = boinc::parseFileTransfers(reply)) {
        for (const auto& transfer : *transfers) {
            FUZZ_CHECK(!transfer.name.empty() && !transfer.projectUrl.empty());
            FUZZ_CHECK(transfer.state == api::BoincTransferState::Active ||
                       transfer.state == api::BoincTransferState::Waiting);
            FUZZ_CHECK(finiteNotNegative(transfer.bytesTotal));
            FUZZ_CHECK(finiteNotNegative(transfer.bytesDone));
            FUZZ_CHECK(finiteNotNegative(transfer.rate));
            FUZZ_CHECK(transfer.bytesTotal == 0.0 || transfer.bytesDone <= transfer.bytesTotal);
            FUZZ_CHECK(transfer.state == api::BoincTransferState::Active || transfer.rate == 0.0);
        }
    }

    if (const auto notices = boinc::parseNotices(reply)) {
        FUZZ_CHECK(std::is_sorted(notices->notices.begin(), notices->notices.end(), bySeqno));
        for (const auto& notice : notices->notices) {
            FUZZ_CHECK(notice.seqno != -1);
        }
    }

    for (const std::int64_t asked : {std::int64_t{0}, std::int64_t{-5}, INT64_MAX}) {
        if (const auto messages = boinc::parseMessages(reply, asked)) {
            FUZZ_CHECK(messages->lastSeqno >= asked);
            for (const auto* list : {&messages->errors, &messages->alerts}) {
                FUZZ_CHECK(std::is_sorted(list->begin(), list->end(), bySeqno));
                for (const auto& notice : *list) {
                    FUZZ_CHECK(notice.error);
                    FUZZ_CHECK(notice.seqno <= messages->lastSeqno);
                }
            }
        }
    }

    if (const auto override = boinc::parseGlobalPrefsOverride(reply)) {
        FUZZ_CHECK(override->empty() || reply.find(*override) != std::string_view::npos);
    }

    for (const char* rpc : {"project_attach_poll", "acct_mgr_rpc_poll"}) {
        if (const auto poll = boinc::parseOperationPoll(reply, rpc)) {
            for (const auto& message : poll->messages) {
                FUZZ_CHECK(!message.empty());
            }
            FUZZ_CHECK(poll->succeeded() || !poll->describe().empty());
        }
    }

    if (const auto nonce = boinc::parseNonce(reply)) {
        FUZZ_CHECK(!nonce->empty());
    }
    (void)boinc::parseAuthorized(reply);
    (void)boinc::parseSuccess(reply, "project_attach");

    // Notice text as the tray and `nicer boinc` show it.
    const std::string plain = boinc::htmlToPlainText(reply);
    FUZZ_CHECK(plain.find("\n\n\n") == std::string::npos);
    (void)boinc::stripTranslation(reply);
    return 0;
}
