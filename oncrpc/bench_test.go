package oncrpc

import "testing"

// A typical Linux NFS call header: AUTH_SYS with a short machine name and a few gids.
func benchCall(tb testing.TB) Call {
	var cred SysCred
	cred.Stamp = 0x5f5e100
	cred.MachineName = []byte("client.example")
	cred.UID, cred.GID = 1000, 1000
	cred.NGids = 4
	cred.Gids = [MaxGids]uint32{1000, 4, 24, 27}
	body := make([]byte, MaxAuthBody)
	n, err := cred.Encode(body)
	if err != nil {
		tb.Fatal(err)
	}
	return Call{XID: 1, Prog: 0x2f0c8166, Vers: 1, Proc: 1, Cred: OpaqueAuth{Flavor: FlavorSys, Body: body[:n]}}
}

func callCycle(c *Call, d *Call, s *SysCred, buf []byte) {
	c.XID++
	n, err := c.Encode(buf)
	if err != nil {
		panic(err)
	}
	if _, err := d.Decode(buf[:n]); err != nil {
		panic(err)
	}
	if err := DecodeSysCred(d.Cred.Body, s); err != nil {
		panic(err)
	}
}

func replyCycle(r *Reply, d *Reply, buf []byte) {
	r.XID++
	n, err := r.Encode(buf)
	if err != nil {
		panic(err)
	}
	if _, err := d.Decode(buf[:n]); err != nil {
		panic(err)
	}
}

func TestZeroAllocs(t *testing.T) {
	c, d, s := benchCall(t), Call{}, SysCred{}
	buf := make([]byte, MaxCallHeaderSize)
	if a := testing.AllocsPerRun(1000, func() { callCycle(&c, &d, &s, buf) }); a != 0 {
		t.Errorf("call encode+decode: %v allocs", a)
	}
	r, rd := Reply{Stat: Accepted, Accept: Success}, Reply{}
	if a := testing.AllocsPerRun(1000, func() { replyCycle(&r, &rd, buf) }); a != 0 {
		t.Errorf("reply encode+decode: %v allocs", a)
	}
	bad := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3}
	if a := testing.AllocsPerRun(1000, func() {
		if _, err := d.Decode(bad); err == nil {
			panic("accepted rpcvers 3")
		}
	}); a != 0 {
		t.Errorf("decode error path: %v allocs", a)
	}
}

func BenchmarkCall(b *testing.B) {
	c, d := benchCall(b), Call{}
	buf := make([]byte, MaxCallHeaderSize)
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Encode(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	n, _ := c.Encode(buf)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(buf[:n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("EncodeDecodeSys", func(b *testing.B) {
		var s SysCred
		b.ReportAllocs()
		for b.Loop() {
			callCycle(&c, &d, &s, buf)
		}
	})
}

func BenchmarkReply(b *testing.B) {
	r, d := Reply{Stat: Accepted, Accept: Success}, Reply{}
	buf := make([]byte, MaxReplyHeaderSize)
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Encode(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	n, _ := r.Encode(buf)
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(buf[:n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("EncodeDecode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			replyCycle(&r, &d, buf)
		}
	})
}
