module example.com/thirdparty

go 1.26.0

require github.com/conform-spi/conform v0.0.0

require (
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-task/slim-sprig/v3 v3.0.0 // indirect
	github.com/google/pprof v0.0.0-20261016150608-1facf8f91b50 // indirect
	github.com/onsi/ginkgo/v2 v2.34.0 // indirect
	github.com/pingcap/errors v0.11.4 // indirect
	github.com/pingcap/failpoint v0.0.0-20240528011301-b51a646c7c86 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace github.com/conform-spi/conform => ../..
