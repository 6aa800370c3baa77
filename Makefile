# sbx - a sandbox runner.  See README.md.
#
#   make            build ./sbx (-static-pie where it can; STATIC=0: dynamic)
#   make check      install missing build deps (as root), build, run all tests
#   make demo       build sbx and a busybox rootfs, run a real sandbox
#   make install    PREFIX=/usr/local DESTDIR=
#   make WERROR=1 SANITIZE=address,undefined check

VERSION     := 0.1.0
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
DATADIR     ?= $(PREFIX)/share
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR  ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
EXAMPLEDIR  ?= $(DATADIR)/sbx/profiles

CC          ?= cc
PKG_CONFIG  ?= pkg-config
PKGS        := libseccomp libcap inih libarchive jansson libcrypto libssl libgit2 libnftnl
# libarchive and libcrypto are dlopen()ed on first use (lib/image/archive_dl.c),
# and so are libssl (lib/net/tls_dl.c, credential injection), libnftnl
# (lib/jail/capture.c, in the jail) and libgit2 (sbx diff): compiled
# against, not linked, so a run that does not need them never loads them.
LINK_PKGS   := libseccomp libcap inih jansson
TEST_PKGS   := cmocka

WARNINGS := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wwrite-strings -Wno-unused-parameter
HARDEN   := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
OPT      ?= -O2 -g
CFLAGS   ?=
LDFLAGS  ?=

# pkg-config runs lazily, once, at the first recipe that needs it: on a fresh
# machine .deps-ok (an order-only prerequisite of every object) installs
# pkg-config and the -dev packages before that.  Hence "=" below, not ":=".
pkgconf = $(call pkgconf_ok,$(shell $(PKG_CONFIG) $(1) 2>/dev/null || echo pkgconf-failed),$(1))
pkgconf_ok = $(if $(filter pkgconf-failed,$(1)),$(error '$(PKG_CONFIG) $(2)' failed: run 'make deps'),$(1))
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(call pkgconf,--cflags $(PKGS)) )$(PKG_CFLAGS)
LIBS = $(eval LIBS := $$(call pkgconf,--libs $(LINK_PKGS)))$(LIBS)
TEST_CFLAGS = $(eval TEST_CFLAGS := $$(call pkgconf,--cflags $(TEST_PKGS)) )$(TEST_CFLAGS)
TEST_LIBS = $(eval TEST_LIBS := $$(call pkgconf,--libs $(TEST_PKGS)))$(TEST_LIBS)

ALL_CFLAGS = -std=gnu11 $(OPT) $(WARNINGS) $(HARDEN) -D_GNU_SOURCE \
	-DSBX_VERSION='"$(VERSION)"' $(LIB_INC) $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = -pie -Wl,-z,relro,-z,now -Wl,--as-needed $(LDFLAGS)

# The sbx binary (not the tests) is linked -static-pie against the four
# libraries' .a files when all four are there (Debian's -dev packages ship
# them): no loader work at each start and no whole libc mapped, so ~0.5 ms
# and ~1 MiB of peak RSS less a run (bench/startup.sh, make bench).
# libarchive, libcrypto, libssl, libnftnl and libgit2 stay dlopen()ed;
# those and the NSS modules of user and group lookups then need the glibc
# sbx was built with (ld warns so at each link).  STATIC=0 links sbx
# dynamically, STATIC=1 insists on static; SANITIZE builds are dynamic.
STATIC      ?= auto
STATIC_A    := libseccomp.a libcap.a libinih.a libjansson.a
ifneq ($(SANITIZE),)
STATIC      := 0
endif
STATIC_LDFLAGS = $(subst -pie,-static-pie,$(ALL_LDFLAGS))
STATIC_LIBS := $(addprefix -l:,$(STATIC_A)) -ldl
# ld's output less glibc's warning at each dlopen(), getpwuid(),
# getaddrinfo()... call, which is expected: one line says it instead.
LD_STATIC_FILTER := /: in function / { held = $$0; next } \
	/requires at runtime the shared libraries from the glibc version/ { held = ""; n++; next } \
	{ if (held != "") print held; held = ""; print } \
	END { if (held != "") print held; if (n && r == 0) print "sbx: linked -static-pie: its dlopen() of \
	libarchive, libssl, libgit2... and user lookups need this glibc at run time (STATIC=0: dynamic)" }

ifeq ($(WERROR),1)
ALL_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
ALL_CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
# _FORTIFY_SOURCE and ASan do not mix well.
HARDEN      := $(filter-out -D_FORTIFY_SOURCE=2,$(HARDEN))
endif

# lib/ in folders by stage, in the order they may include each other
# (lib/README.md): a folder uses its own headers and those of the folders
# before it.
LIB_DIRS  := util net seccomp profile image limits jail state review run
LIB_INC   := $(addprefix -iquote lib/,$(LIB_DIRS))
LIB_SRCS  := $(wildcard $(addprefix lib/,$(addsuffix /*.c,$(LIB_DIRS)))) \
	lib/profile/builtin_profiles.c lib/seccomp/seccomp_builtin.c
LIB_SRCS  := $(sort $(LIB_SRCS))
LIB_OBJS  := $(LIB_SRCS:.c=.o)
CMD_SRCS  := $(sort $(wildcard cmd/*.c))
CMD_OBJS  := $(CMD_SRCS:.c=.o)
PROFILES  := $(sort $(wildcard profiles/*.ini))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:.c=)
HDRS      := $(wildcard lib/*/*.h cmd/*.h)

all: sbx

# Build dependencies: installed (as root) or named (otherwise) when missing.
deps:
	@tests/deps.sh --install

.deps-ok: tests/deps.sh
	@tests/deps.sh --ensure-build
	@touch $@

lib/profile/builtin_profiles.c: $(PROFILES) profiles/embed.sh
	sh profiles/embed.sh $(PROFILES) > $@.tmp && mv $@.tmp $@

# The built-in seccomp policies resolved and compiled by libseccomp at build
# time (lib/seccomp/gen/seccomp_gen.c, used by lib/seccomp/seccomp_embed.c).
# The generator links the library objects, but not the file it writes.
SECCOMP_GEN_OBJS = $(filter-out lib/seccomp/seccomp_builtin.o,$(LIB_OBJS))
lib/seccomp/gen/libsbx-gen.a: $(SECCOMP_GEN_OBJS)
	rm -f $@ && ar rcs $@ $^

lib/seccomp/gen/seccomp_gen: lib/seccomp/gen/seccomp_gen.c lib/seccomp/gen/libsbx-gen.a $(HDRS) | .deps-ok
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< lib/seccomp/gen/libsbx-gen.a $(LIBS)

lib/seccomp/seccomp_builtin.c: lib/seccomp/gen/seccomp_gen
	lib/seccomp/gen/seccomp_gen > $@.tmp && mv $@.tmp $@

lib/%.o: lib/%.c $(HDRS) | .deps-ok
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

cmd/%.o: cmd/%.c $(HDRS) | .deps-ok
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

sbx.o: sbx.c $(HDRS) | .deps-ok
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

lib/libsbx.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

sbx: sbx.o $(CMD_OBJS) lib/libsbx.a
	@static=$(STATIC); \
	if [ "$$static" = auto ]; then static=1; for a in $(STATIC_A); do \
		case $$($(CC) -print-file-name=$$a) in /*) ;; *) static=0 ;; esac; done; fi; \
	if [ "$$static" = 1 ]; then \
		echo "$(CC) $(STATIC_LDFLAGS) -o $@ sbx.o ... lib/libsbx.a $(STATIC_LIBS)"; \
		$(CC) $(STATIC_LDFLAGS) -o $@ sbx.o $(CMD_OBJS) lib/libsbx.a $(STATIC_LIBS) 2>$@.ld; \
		r=$$?; awk -v r=$$r '$(LD_STATIC_FILTER)' $@.ld >&2; rm -f $@.ld; exit $$r; \
	else \
		echo "$(CC) $(ALL_LDFLAGS) -o $@ sbx.o ... lib/libsbx.a $(LIBS)"; \
		$(CC) $(ALL_LDFLAGS) -o $@ sbx.o $(CMD_OBJS) lib/libsbx.a $(LIBS); \
	fi

# Some unit tests compile cmd/ sources in (#include "../../cmd/run.c").
tests/unit/test_%: tests/unit/test_%.c lib/libsbx.a $(HDRS) $(CMD_SRCS)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) $(ALL_LDFLAGS) \
		-o $@ $< lib/libsbx.a $(LIBS) $(TEST_LIBS)

# Attack programs for tests/escape, static so they run in any rootfs.
ESCAPE_SRCS := $(sort $(wildcard tests/escape/*.c))
ESCAPE_BINS := $(ESCAPE_SRCS:.c=)
tests/escape/%: tests/escape/%.c $(wildcard tests/escape/*.h) | .deps-ok
	$(CC) -std=gnu11 -O1 -static -o $@ $< $(ESCAPE_LDLIBS)

# libFuzzer harnesses (clang from Debian): tests/fuzz/fuzz_*.c against the
# library built with ASan+UBSan into tests/fuzz/build/.
#   make fuzz FUZZ_SECONDS=1800      run each harness for that long
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -std=gnu11 -D_GNU_SOURCE -DSBX_VERSION='"$(VERSION)"' $(LIB_INC)
FUZZ_SRCS    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,tests/fuzz/build/%,$(FUZZ_SRCS))
FUZZ_LIB_OBJS = $(patsubst lib/%.c,tests/fuzz/build/lib/%.o,$(LIB_SRCS))

tests/fuzz/build/lib/%.o: lib/%.c $(HDRS) | .deps-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(PKG_CFLAGS) -c -o $@ $<

tests/fuzz/build/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< $(FUZZ_LIB_OBJS) $(LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# Unit tests under valgrind memcheck: any error or definite leak fails.
valgrind: $(UNIT_BINS)
	@tests/run-valgrind.sh $(UNIT_BINS)

# check, unit and demo need the test packages too (installed as root, or
# named with the apt-get line), not only what building sbx needs.
deps-test:
	@tests/deps.sh --ensure

unit: deps-test $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

# check builds with one job per CPU unless make was given -j (the suite
# itself runs two integration test files at a time where there are 2 CPUs:
# SBX_TEST_JOBS in tests/run-all.sh).
NPROC = $(shell nproc 2>/dev/null || echo 1)
check: deps-test .deps-ok
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC)) check-build
	@tests/run-all.sh

check-build: sbx $(UNIT_BINS) $(ESCAPE_BINS)
	@:

demo: deps-test .deps-ok sbx
	@tests/demo.sh

bench: .deps-ok sbx
	@tests/deps.sh --ensure-bench
	@bench/run.sh

# Man pages (mandoc -Tlint, as make check), shell syntax of the scripts,
# lib/'s include order (tests/lib-layers.sh) and the C sources' format
# (.clang-format), and of the completions.
lint: .deps-ok
	@fail=0; \
	for m in man/*.[1-8]; do mandoc -Tlint -W warning $$m || fail=1; done; \
	for f in tests/*.sh tests/lib/*.sh tests/integration/*.sh tests/escape/*.sh \
		bench/*.sh .ci/run profiles/embed.sh; do \
		[ -f $$f ] || continue; \
		case "$$(head -n 1 $$f)" in *bash*) bash -n $$f ;; *) sh -n $$f ;; esac || fail=1; \
	done; \
	bash -n completions/sbx.bash || fail=1; \
	sh tests/lib-layers.sh || fail=1; \
	if command -v clang-format >/dev/null; then \
		for f in $$(git ls-files 'lib/*.[ch]' 'cmd/*.[ch]' sbx.c 2>/dev/null); do \
			clang-format --dry-run -Werror $$f 2>/dev/null || { echo "lint: $$f is not as .clang-format has it (clang-format -i $$f)"; fail=1; }; \
		done; \
	else echo "lint: clang-format is not installed (make deps-test, or apt-get install clang-format)"; fail=1; fi; \
	if command -v zsh >/dev/null; then zsh -n completions/_sbx || fail=1; fi; \
	if command -v fish >/dev/null; then fish -n completions/sbx.fish || fail=1; fi; \
	[ $$fail = 0 ] && echo "lint: ok"

install: sbx
	install -Dm755 sbx $(DESTDIR)$(BINDIR)/sbx
	for m in man/*.1; do install -Dm644 $$m $(DESTDIR)$(MANDIR)/man1/$$(basename $$m); done
	for m in man/*.5; do [ -e $$m ] && install -Dm644 $$m $(DESTDIR)$(MANDIR)/man5/$$(basename $$m); done; true
	[ -e completions/sbx.bash ] && install -Dm644 completions/sbx.bash $(DESTDIR)$(BASHCOMPDIR)/sbx; true
	[ -e completions/_sbx ] && install -Dm644 completions/_sbx $(DESTDIR)$(ZSHCOMPDIR)/_sbx; true
	[ -e completions/sbx.fish ] && install -Dm644 completions/sbx.fish $(DESTDIR)$(FISHCOMPDIR)/sbx.fish; true
	for p in $(PROFILES); do install -Dm644 $$p $(DESTDIR)$(EXAMPLEDIR)/$$(basename $$p); done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/sbx
	for m in man/*.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$(basename $$m); done
	for m in man/*.5; do rm -f $(DESTDIR)$(MANDIR)/man5/$$(basename $$m); done
	rm -f $(DESTDIR)$(BASHCOMPDIR)/sbx $(DESTDIR)$(ZSHCOMPDIR)/_sbx $(DESTDIR)$(FISHCOMPDIR)/sbx.fish
	rm -rf $(DESTDIR)$(EXAMPLEDIR)
	-rmdir $(DESTDIR)$(DATADIR)/sbx 2>/dev/null

clean:
	rm -f sbx sbx.o $(CMD_OBJS) lib/*/*.o lib/libsbx.a lib/profile/builtin_profiles.c \
		lib/seccomp/seccomp_builtin.c lib/seccomp/gen/seccomp_gen lib/seccomp/gen/libsbx-gen.a \
		$(UNIT_BINS) $(ESCAPE_BINS) .deps-ok
	rm -rf tests/out tests/fuzz/build

.PHONY: all deps deps-test unit check check-build demo bench lint install uninstall clean fuzz fuzz-build valgrind
