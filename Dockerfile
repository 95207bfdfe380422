# The operator's image: a static binary on a distroless base, running as a non-root user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY config/ config/
COPY internal/ internal/
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /appkeeper ./cmd/appkeeper

FROM gcr.io/distroless/static:nonroot
COPY --from=build /appkeeper /appkeeper
USER 65532:65532
ENTRYPOINT ["/appkeeper"]
