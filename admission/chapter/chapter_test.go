package chapter_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/conform-spi/conform/admission/chapter"
)

func TestMain(m *testing.M) {
	chapter.ServeHelperIfRequested()
	os.Exit(m.Run())
}

func TestChapter(t *testing.T) {
	RegisterFailHandler(Fail)
	chapter.Register(chapter.Config{})
	RunSpecs(t, "Realm admission fences chapter")
}
