#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nicer {

/// Which kind of failure an Error is, set where the fault is known. It chooses how the failure is answered (a
/// D-Bus error name, for one), never what it says.
enum class ErrorKind {
    Failed,       ///< a valid request that did not succeed: a file not written, a call refused
    InvalidInput, ///< what the caller gave is wrong, and it fails the same way until the caller changes it
    Unavailable,  ///< a valid request whose means are not there now: a program not installed, a client not up
};

/// A failure a user can read: what went wrong and, where possible, what to do about it.
struct Error {
    std::string message;
    ErrorKind kind = ErrorKind::Failed;

    /// The same failure, its message after @p context ("the parameters were not changed: ").
    Error within(std::string_view context) const { return {std::string(context) + message, kind}; }
};

/// The value of an operation that can fail, or the Error that says why (errors are values in the core).
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value)
        : m_value(std::move(value)) {}
    Result(Error error)
        : m_value(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<T>(m_value); }
    const T& value() const& { return std::get<T>(m_value); }
    T&& value() && { return std::get<T>(std::move(m_value)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<Error>(m_value); }

private:
    std::variant<T, Error> m_value;
};

/// Result of an operation that yields nothing but may fail.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error)
        : m_error(std::move(error))
        , m_failed(true) {}

    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return m_error; }

private:
    Error m_error;
    bool m_failed = false;
};

} // namespace nicer
