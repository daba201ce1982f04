# The .deb (CPack): nicerd, nicer and nicer-tray with everything resources/ installs, the DEP-5 copyright
# file and the Debian changelog. Dependencies come from dpkg-shlibdeps. Build it with `packaging/dev.sh package`,
# which also sets Debian's hardening flags; docs/packaging.md says what lintian reports and why.
set(NICER_MAINTAINER "The nicer developers <nicer@example.org>" CACHE STRING "The package's Maintainer field")

# /usr/share/doc/nicer: the copyright file and the changelog, compressed as Debian policy wants (nicer is its own
# upstream, a native package: changelog.gz, not changelog.Debian.gz).
set(doc_dir ${CMAKE_INSTALL_DATADIR}/doc/nicer)
configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/copyright ${CMAKE_BINARY_DIR}/deb/copyright @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/deb/changelog.gz
    COMMAND gzip -9n < ${CMAKE_CURRENT_LIST_DIR}/deb/changelog > ${CMAKE_BINARY_DIR}/deb/changelog.gz
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/deb/changelog
    COMMENT "Compressing the Debian changelog")
add_custom_target(nicer_deb_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/deb/changelog.gz)
install(FILES ${CMAKE_BINARY_DIR}/deb/copyright ${CMAKE_BINARY_DIR}/deb/changelog.gz DESTINATION ${doc_dir})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nicer)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${NICER_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "give spare CPU to volunteer computing without feeling it")
set(CPACK_PACKAGE_DESCRIPTION "\
nicer runs volunteer computing work (BOINC, Folding@home or any command) in a
systemd user slice and, every period, caps that slice with a feedback
controller on the machine's idle time: it keeps a small reserve band of the
CPU free for your own programs, widens it the moment they want more, and
stops the work after repeated overload. No root, no kernel change, no change
to the volunteer application.
.
This package holds the daemon nicerd (a systemd user service, started by
D-Bus activation), the command-line client nicer, and the tray application
nicer-tray with its live CPU chart, parameter sliders and pause switch.
Work units are downloaded over one HTTP/2 connection that yields the link to
your own traffic.")
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE ${NICER_HOMEPAGE})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# nicerd talks to the user's systemd manager and session bus; the boinc preset runs Debian's BOINC client.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "systemd, dbus-user-session | default-dbus-session-bus")
# The root idle slice needs nothing more: each user's socket comes with their manager, and no polkit rule
# grants anything.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "boinc-client")
# The maintainer scripts: removing the package stops the trays, nicerd and the work in every user's manager;
# an upgrade restarts a running nicerd on the new program (docs/packaging.md, "Removing and upgrading"). Each
# holds the shared functions of deb/maintainer/user-managers.sh.
file(READ ${CMAKE_CURRENT_LIST_DIR}/deb/maintainer/user-managers.sh NICER_USER_MANAGERS)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/deb/maintainer/user-managers.sh)
set(maintainer_scripts)
foreach(script prerm postrm postinst)
    configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/maintainer/${script}.in ${CMAKE_BINARY_DIR}/deb/${script} @ONLY)
    list(APPEND maintainer_scripts ${CMAKE_BINARY_DIR}/deb/${script})
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${maintainer_scripts})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

include(CPack)
