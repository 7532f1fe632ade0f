var mbdPage={compare:function(el,d){el.textContent=JSON.stringify(d.summary)}};
