# The Wayland protocol of presence/WaylandIdleSource, ext-idle-notify-v1 (wayland-protocols' staging): its
# interfaces (C) and client header, and the server header of the tests' compositor double
# (tests/presence/FakeCompositor), written by wayland-scanner into ${CMAKE_CURRENT_BINARY_DIR}/presence-protocols.
# Included by core/CMakeLists.txt, after find_package(PkgConfig). Sets, there and in the scope above it (the
# tests'):
#   NICER_WAYLAND_CLIENT_PROTOCOLS        the generated interfaces (.c), a source of nicer_presence; the client
#                                         header comes with it
#   NICER_WAYLAND_PROTOCOL_DIR            the directory of the generated headers
#   NICER_WAYLAND_SERVER_PROTOCOL_HEADER  the server header, made by the target nicer_wayland_server_protocol; the
#                                         server uses the interfaces nicer_presence has
find_program(NICER_WAYLAND_SCANNER wayland-scanner REQUIRED)
pkg_get_variable(nicer_wayland_protocols_data wayland-protocols pkgdatadir)
set(nicer_idle_notify_xml ${nicer_wayland_protocols_data}/staging/ext-idle-notify/ext-idle-notify-v1.xml)
if(NOT nicer_wayland_protocols_data OR NOT EXISTS ${nicer_idle_notify_xml})
    message(FATAL_ERROR "ext-idle-notify-v1.xml not found in wayland-protocols' data directory "
        "(\"${nicer_wayland_protocols_data}\"): install wayland-protocols 1.27 or newer (Debian: wayland-protocols)")
endif()

set(NICER_WAYLAND_PROTOCOL_DIR ${CMAKE_CURRENT_BINARY_DIR}/presence-protocols)
set(nicer_idle_notify_client_header ${NICER_WAYLAND_PROTOCOL_DIR}/ext-idle-notify-v1-client-protocol.h)
set(NICER_WAYLAND_CLIENT_PROTOCOLS ${NICER_WAYLAND_PROTOCOL_DIR}/ext-idle-notify-v1-protocol.c)
set(NICER_WAYLAND_SERVER_PROTOCOL_HEADER ${NICER_WAYLAND_PROTOCOL_DIR}/ext-idle-notify-v1-server-protocol.h)

add_custom_command(
    OUTPUT ${NICER_WAYLAND_CLIENT_PROTOCOLS} ${nicer_idle_notify_client_header}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${NICER_WAYLAND_PROTOCOL_DIR}
    COMMAND ${NICER_WAYLAND_SCANNER} private-code ${nicer_idle_notify_xml} ${NICER_WAYLAND_CLIENT_PROTOCOLS}
    COMMAND ${NICER_WAYLAND_SCANNER} client-header ${nicer_idle_notify_xml} ${nicer_idle_notify_client_header}
    DEPENDS ${nicer_idle_notify_xml}
    COMMENT "wayland-scanner: ext-idle-notify-v1's interfaces and client header"
    VERBATIM)
# Its own command and target: one consumer per custom command (the test executable adds a dependency on it).
add_custom_command(
    OUTPUT ${NICER_WAYLAND_SERVER_PROTOCOL_HEADER}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${NICER_WAYLAND_PROTOCOL_DIR}
    COMMAND ${NICER_WAYLAND_SCANNER} server-header ${nicer_idle_notify_xml} ${NICER_WAYLAND_SERVER_PROTOCOL_HEADER}
    DEPENDS ${nicer_idle_notify_xml}
    COMMENT "wayland-scanner: ext-idle-notify-v1's server header (the tests' compositor double)"
    VERBATIM)
add_custom_target(nicer_wayland_server_protocol DEPENDS ${NICER_WAYLAND_SERVER_PROTOCOL_HEADER})

foreach(var NICER_WAYLAND_CLIENT_PROTOCOLS NICER_WAYLAND_PROTOCOL_DIR NICER_WAYLAND_SERVER_PROTOCOL_HEADER)
    set(${var} ${${var}} PARENT_SCOPE)
endforeach()
