#include "libsystemd/Connection.h"

#include "util/Log.h"

#include <cerrno>
#include <memory>
#include <utility>

namespace nicer::libsystemd {

namespace {

/// What a slot's C callbacks reach through their userdata: owned by the sd_bus_slot (freed by its destroy
/// callback), so it lives while sd-bus may call it, a callback that drops its own slot included.
struct SlotState {
    MessageCallback callback;
    MessageCallback installed;
    ErrorHandler onError;
};

int runCallback(sd_bus_message* message, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto& state = *static_cast<SlotState*>(userdata);
    detail::guarded(state.onError, [&] { state.callback(message); });
    return 0;
}

int runInstalled(sd_bus_message* reply, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto& state = *static_cast<SlotState*>(userdata);
    // Returning 0, also for a refused match: the connection stays.
    detail::guarded(state.onError, [&] { state.installed(reply); });
    return 0;
}

void destroyState(void* userdata) noexcept {
    delete static_cast<SlotState*>(userdata);
}

/// @p add with a new state as userdata; on success the slot owns the state.
template <typename Add>
Result<BusSlot> addSlot(std::unique_ptr<SlotState> state, Add&& add) {
    sd_bus_slot* raw = nullptr;
    if (const int r = std::forward<Add>(add)(&raw, state.get()); r < 0) {
        return Error{busErrorText(r, nullptr)};
    }
    BusSlot slot(raw);
    sd_bus_slot_set_destroy_callback(raw, &destroyState);
    (void)state.release(); // the slot's now
    return slot;
}

int openBus(const BusTarget& target, BusPtr& bus) {
    sd_bus* raw = nullptr;
    if (target.address.empty()) {
        const int r =
            target.kind == BusTarget::Kind::User ? sd_bus_open_user(&raw) : sd_bus_open_system(&raw);
        bus.reset(raw);
        return r;
    }
    int r = sd_bus_new(&raw);
    bus.reset(raw);
    if (r >= 0) {
        r = sd_bus_set_address(raw, target.address.c_str());
    }
    if (r >= 0) {
        r = sd_bus_set_bus_client(raw, 1);
    }
    if (r >= 0) {
        r = sd_bus_start(raw);
    }
    return r;
}

} // namespace

Result<void> sendWithoutReply(const BusTarget& target, const MethodAddress& to,
                              const std::function<void(MessageWriter&)>& arguments) {
    BusPtr bus;
    if (const int r = openBus(target, bus); r < 0) {
        return busError("cannot connect to the bus", r);
    }
    auto call = newMethodCall(bus.get(), to, arguments);
    if (!call) {
        return call.error();
    }
    int r = sd_bus_message_set_expect_reply(call->get(), 0);
    if (r >= 0) {
        r = sd_bus_send(bus.get(), call->get(), nullptr);
    }
    if (r >= 0) {
        r = sd_bus_flush(bus.get());
    }
    if (r < 0) {
        return busError(std::string("cannot send ") + to.member, r);
    }
    return {};
}

Result<BusSlot> addMatch(sd_bus* bus, const std::string& rule, MessageCallback callback,
                         MessageCallback installed, ErrorHandler onError) {
    const bool withInstalled = static_cast<bool>(installed);
    auto state =
        std::make_unique<SlotState>(SlotState{std::move(callback), std::move(installed), std::move(onError)});
    return addSlot(std::move(state), [&](sd_bus_slot** slot, SlotState* userdata) {
        // Asynchronous: sd_bus_add_match() would wait for the bus's answer on nicerd's loop.
        return sd_bus_add_match_async(bus, slot, rule.c_str(), &runCallback,
                                      withInstalled ? &runInstalled : nullptr, userdata);
    });
}

Result<BusSlot> callAsync(sd_bus* bus, sd_bus_message* call, MessageCallback callback,
                          std::uint64_t timeoutUsec, ErrorHandler onError) {
    auto state = std::make_unique<SlotState>(SlotState{std::move(callback), {}, std::move(onError)});
    return addSlot(std::move(state), [&](sd_bus_slot** slot, SlotState* userdata) {
        return sd_bus_call_async(bus, slot, call, &runCallback, userdata, timeoutUsec);
    });
}

Result<BusSlot> callMethod(sd_bus* bus, const MethodAddress& to,
                           const std::function<void(MessageWriter&)>& arguments, MessageCallback callback,
                           std::uint64_t timeoutUsec, ErrorHandler onError) {
    auto call = newMethodCall(bus, to, arguments);
    if (!call) {
        return call.error();
    }
    return callAsync(bus, call->get(), std::move(callback), timeoutUsec, std::move(onError));
}

Connection::Connection(sd_event* event, BusTarget target, Callbacks callbacks, int priority)
    : m_event(event)
    , m_target(std::move(target))
    , m_callbacks(std::move(callbacks))
    , m_priority(priority) {
    if (!m_callbacks.onError) {
        // Nobody to tell: the log says it, and the loop runs on.
        m_callbacks.onError = [](std::string_view what) {
            log::warning() << "a D-Bus callback failed: " << what;
        };
    }
}

Connection::~Connection() {
    close();
}

Result<void> Connection::connect() {
    close();
    BusPtr bus;
    if (const int r = openBus(m_target, bus); r < 0) {
        return Error{busErrorText(r, nullptr), ErrorKind::Unavailable};
    }
    if (const int r = sd_bus_attach_event(bus.get(), m_event, m_priority); r < 0) {
        return Error{"cannot attach it to the event loop: " + busErrorText(r, nullptr),
                     ErrorKind::Unavailable};
    }
    auto lost = libsystemd::addMatch(
        bus.get(), kDisconnectedRule,
        [this](sd_bus_message*) {
            if (m_callbacks.lost) {
                m_callbacks.lost();
            }
        },
        {}, m_callbacks.onError);
    if (!lost) {
        return Error{"cannot watch the connection's end: " + lost.error().message, ErrorKind::Unavailable};
    }
    m_bus = std::move(bus);
    m_lostMatch = std::move(*lost);
    if (m_callbacks.connected) {
        if (auto done = m_callbacks.connected(m_bus.get()); !done) {
            close();
            return done;
        }
    }
    return {};
}

void Connection::close() {
    m_lostMatch.reset();
    m_bus.reset();
}

bool Connection::isOpen() const {
    return m_bus && sd_bus_is_open(m_bus.get()) > 0;
}

Result<BusSlot> Connection::addMatch(const std::string& rule, MessageCallback callback,
                                     MessageCallback installed) {
    if (!m_bus) {
        return Error{busErrorText(-ENOTCONN, nullptr)};
    }
    return libsystemd::addMatch(m_bus.get(), rule, std::move(callback), std::move(installed),
                                m_callbacks.onError);
}

Result<BusSlot> Connection::callAsync(sd_bus_message* call, MessageCallback callback,
                                      std::uint64_t timeoutUsec) {
    if (!m_bus) {
        return Error{busErrorText(-ENOTCONN, nullptr)};
    }
    return libsystemd::callAsync(m_bus.get(), call, std::move(callback), timeoutUsec, m_callbacks.onError);
}

Result<BusSlot> Connection::callMethod(const MethodAddress& to,
                                       const std::function<void(MessageWriter&)>& arguments,
                                       MessageCallback callback, std::uint64_t timeoutUsec) {
    if (!m_bus) {
        return Error{busErrorText(-ENOTCONN, nullptr)};
    }
    return libsystemd::callMethod(m_bus.get(), to, arguments, std::move(callback), timeoutUsec,
                                  m_callbacks.onError);
}

} // namespace nicer::libsystemd
