#include "libsystemd/Message.h"

namespace nicer::libsystemd {

MessageWriter& MessageWriter::appendBasic(char type, const void* value) {
    if (ok()) {
        keep(sd_bus_message_append_basic(m_message, type, value));
    }
    return *this;
}

MessageWriter& MessageWriter::appendArray(char type, const void* data, std::size_t size) {
    if (ok()) {
        keep(sd_bus_message_append_array(m_message, type, data, size));
    }
    return *this;
}

MessageWriter& MessageWriter::open(char type, const char* contents) {
    if (ok()) {
        keep(sd_bus_message_open_container(m_message, type, contents));
    }
    return *this;
}

MessageWriter& MessageWriter::close() {
    if (ok()) {
        keep(sd_bus_message_close_container(m_message));
    }
    return *this;
}

void MessageWriter::keep(int r) {
    if (r < 0 && m_result >= 0) {
        m_result = r;
    }
}

bool MessageReader::readBasic(char type, void* value) {
    return ok() && keep(sd_bus_message_read_basic(m_message, type, value));
}

bool MessageReader::enter(char type, const char* contents) {
    return ok() && keep(sd_bus_message_enter_container(m_message, type, contents));
}

void MessageReader::exit() {
    if (ok()) {
        keep(sd_bus_message_exit_container(m_message));
    }
}

void MessageReader::skip(const char* types) {
    if (ok()) {
        keep(sd_bus_message_skip(m_message, types));
    }
}

bool MessageReader::peekType(char* type, const char** contents) {
    return ok() && keep(sd_bus_message_peek_type(m_message, type, contents));
}

bool MessageReader::keep(int r) {
    if (r < 0 && m_result >= 0) {
        m_result = r;
    }
    return r > 0;
}

Result<BusMessagePtr> newMethodCall(sd_bus* bus, const MethodAddress& to,
                                    const std::function<void(MessageWriter&)>& arguments) {
    const std::string what = std::string("cannot call ") + to.member;
    sd_bus_message* raw = nullptr;
    if (int r = sd_bus_message_new_method_call(bus, &raw, to.destination, to.path, to.interface, to.member);
        r < 0) {
        return busError(what, r);
    }
    BusMessagePtr call(raw);
    MessageWriter out(call.get());
    if (arguments) {
        arguments(out);
    }
    out.run([&] { return sd_bus_message_set_auto_start(call.get(), 0); });
    if (!out.ok()) {
        return busError(what, out.result());
    }
    return call;
}

} // namespace nicer::libsystemd
