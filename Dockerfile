# syntax=docker/dockerfile:1
#
# The agent image: the static tlsbench binary alone on distroless (no shell,
# no package manager), as the user nonroot. Its entrypoint is tlsbench, so a
# pod's args are a tlsbench command line (see docs/KUBERNETES.md).
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t REGISTRY/tlsbench:TAG .
#   docker push REGISTRY/tlsbench:TAG

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo: distroless/static has no libc), no file paths of this
# machine, no symbol tables, no chart renderer (-tags nocharts: agents never
# draw; gonum/plot and its fonts are left out, see docs/KUBERNETES.md).
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -tags nocharts -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/tlsbench ./cmd/tlsbench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tlsbench /tlsbench
# nonroot (65532), by number: Kubernetes verifies runAsNonRoot only for a
# numeric user.
USER 65532:65532
ENTRYPOINT ["/tlsbench"]
